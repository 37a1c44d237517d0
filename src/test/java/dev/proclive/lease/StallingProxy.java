package dev.proclive.lease;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP proxy in front of one etcd member that holds back, while told to, every call to the
 * paths it is given (a member that stalls chosen calls: the record writes, {@code /v3/kv/txn},
 * while keep-alives pass), answers them late when let go, answers leased writes late while told
 * to (done at once, answered later), and counts the calls to each path.
 * Streams pass through as they come (a watch).
 */
final class StallingProxy implements AutoCloseable {

    private final HttpServer server;
    private final HttpClient http = HttpClient.newHttpClient();
    private final URI target;
    private final Set<String> stalled = ConcurrentHashMap.newKeySet();
    private volatile CountDownLatch released = new CountDownLatch(0);
    final ConcurrentHashMap<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    /**
     * How late the answer to a transaction that writes under an etcd lease comes back: the write
     * is done at once, its answer held this long (a slow member); 0, at once.
     */
    volatile long leasedWriteAnswerDelayMillis;

    StallingProxy(URI target) throws IOException {
        this.target = target;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.setExecutor(Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "stalling-proxy");
            t.setDaemon(true);
            return t;
        }));
        server.createContext("/", this::forward);
        server.start();
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** Holds back every call to {@code path} from now until {@link #release}. */
    synchronized void stall(String path) {
        if (released.getCount() == 0) {
            released = new CountDownLatch(1);
        }
        stalled.add(path);
    }

    /** Lets every held call through, and the next ones. */
    synchronized void release() {
        stalled.clear();
        released.countDown();
    }

    private void forward(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        calls.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
        byte[] body = x.getRequestBody().readAllBytes();
        if (stalled.contains(path)) {
            try {
                released.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(target.resolve(x.getRequestURI()))
                .method(x.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
        String type = x.getRequestHeaders().getFirst("Content-Type");
        if (type != null) {
            request.header("Content-Type", type);
        }
        try {
            HttpResponse<InputStream> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            long late = leasedWriteAnswerDelayMillis;
            if (late > 0 && path.equals("/v3/kv/txn") && new String(body, java.nio.charset.StandardCharsets.UTF_8)
                    .contains("\"lease\"")) {
                byte[] whole = answer.body().readAllBytes(); // the write is done: only its answer is late
                Thread.sleep(late); // time itself is what is tested: a member that answers late
                x.sendResponseHeaders(answer.statusCode(), whole.length);
                try (OutputStream out = x.getResponseBody()) {
                    out.write(whole);
                }
                return;
            }
            x.sendResponseHeaders(answer.statusCode(), 0);
            try (InputStream in = answer.body(); OutputStream out = x.getResponseBody()) {
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            x.close();
        } catch (IOException e) {
            x.close();
        }
    }

    @Override
    public void close() {
        release();
        server.stop(0);
    }
}
