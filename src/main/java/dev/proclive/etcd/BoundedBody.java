package dev.proclive.etcd;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/** A body read into memory up to a bound: past it, the exchange fails and the connection is closed. */
final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {
    private final int max;
    private final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private final ByteArrayOutputStream read = new ByteArrayOutputStream();
    private volatile Flow.Subscription subscription;

    BoundedBody(int max) {
        this.max = max;
    }

    /** Stops reading: the connection is closed, and the body fails if it is not complete. */
    void cancel() {
        Flow.Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
        result.completeExceptionally(new IOException("the answer was abandoned"));
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        for (ByteBuffer b : items) {
            if (read.size() + (long) b.remaining() > max) {
                subscription.cancel();
                result.completeExceptionally(new TooLarge("an answer larger than " + (max >> 20) + " MiB"));
                return;
            }
            byte[] chunk = new byte[b.remaining()];
            b.get(chunk);
            read.write(chunk, 0, chunk.length);
        }
    }

    @Override
    public void onError(Throwable t) {
        result.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        result.complete(read.toByteArray());
    }

    /** An answer larger than the bound: asking for less (a range in smaller pages) may help. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge(String message) {
            super(message);
        }
    }
}
