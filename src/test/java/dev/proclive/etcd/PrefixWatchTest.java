package dev.proclive.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.proclive.text.StrictJson;
import java.io.OutputStream;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The one watch stream of a store: what it remembers, and what it tells a caller who asks late. */
class PrefixWatchTest {

    /** An etcd whose streams are opened here and answered by the test, through {@code sink}. */
    private static Etcd streams(List<Etcd.Changes> sink, List<CompletableFuture<Void>> opened) {
        return (Etcd) Proxy.newProxyInstance(PrefixWatchTest.class.getClassLoader(), new Class<?>[] {Etcd.class},
                (p, m, a) -> {
                    if (m.getName().equals("watchPrefix")) {
                        sink.add((Etcd.Changes) a[2]);
                        CompletableFuture<Void> s = new CompletableFuture<>();
                        opened.add(s);
                        return s;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    @Test
    void aChangeForgottenWhenTheMemoryFilledIsStillNewsToAReaderJustBeforeIt() {
        List<Etcd.Changes> sink = new ArrayList<>();
        PrefixWatch w = new PrefixWatch(streams(sink, new ArrayList<>()), "p/", () -> { });
        w.changed("p/first", 10); // opens the stream from after 10
        List<Etcd.Change> fill = new ArrayList<>();
        for (int i = 0; i < 4095; i++) {
            fill.add(new Etcd.Change("p/k" + i, 11 + i));
        }
        sink.get(0).seen(0, fill);
        long x = 11 + 4095;
        // one transaction at revision x: the record, then its fence key (new: the memory is full and cleared)
        sink.get(0).seen(x, List.of(new Etcd.Change("p/build", x), new Etcd.Change("p/build.fence", x)));
        // a caller that read p/build at x-1 asks only now
        assertThat(w.changed("p/build", x - 1)).as("the change at x is news to a reader at x-1").isDone();
        assertThat(w.changed("p/build", x)).as("not to one that read at x").isNotDone();
    }

    /** A read that saw a key at a later revision than a caller's tells that caller; one at its revision, nobody. */
    @Test
    void aReadThatSawALaterRevisionTellsWhoWaitsOnThatKeyOnly() {
        PrefixWatch w = new PrefixWatch(streams(new ArrayList<>(), new ArrayList<>()), "p/", () -> { });
        CompletableFuture<Void> at10 = w.changed("p/build", 10);
        CompletableFuture<Void> at12 = w.changed("p/build", 12);
        CompletableFuture<Void> other = w.changed("p/other", 10);
        w.read("p/build", 10);
        assertThat(at10).as("the revision it read").isNotDone();
        w.read("p/build", 12);
        assertThat(at10).isDone();
        assertThat(at12).isNotDone();
        assertThat(other).as("another key").isNotDone();
        w.read("p/build", 13);
        assertThat(at12).isDone();
    }

    @Test
    void aCallerWaitingWhenTheStreamIsCanceledIsTold() {
        List<CompletableFuture<Void>> opened = new ArrayList<>();
        PrefixWatch w = new PrefixWatch(streams(new ArrayList<>(), opened), "p/", () -> { });
        CompletableFuture<Void> f = w.changed("p/build", 10);
        opened.get(0).cancel(false); // by anything but the book's close
        assertThat(f).as("told (exceptionally), never left waiting").failsWithin(java.time.Duration.ofSeconds(10));
    }

    @Test
    void aStreamThatAnswersGarbageIsAskedAgainOnlyAfterAGrowingPause() throws Exception {
        HttpServer garbage = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        garbage.createContext("/", x -> {
            x.getRequestBody().readAllBytes();
            byte[] answer = "this is no watch\n".getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, answer.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(answer);
            }
        });
        garbage.start();
        URI member = URI.create("http://127.0.0.1:" + garbage.getAddress().getPort());
        PrefixWatch w = new PrefixWatch(EtcdGateway.open(List.of(member), Optional.empty(), Duration.ofSeconds(2),
                StrictJson.mapper()), "p/", () -> { });
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            int streams = 0;
            while (System.nanoTime() < until) {
                try {
                    w.changed("p/a", 1).get(10, TimeUnit.SECONDS);
                } catch (ExecutionException broke) {
                    // a waiter looks again when the stream breaks, and asks anew, as this loop does
                }
                streams++;
            }
            // Without a pause this loop opens hundreds of streams; 25 ms doubling to 1.6 s allows about seven in 3 s.
            assertThat(streams).as("streams opened in 3 s").isBetween(1, 15);
        } finally {
            w.close();
            garbage.stop(0);
        }
    }
}
