package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseStore;
import dev.proclive.etcd.Etcd;
import dev.proclive.etcd.EtcdGateway;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The lease store on etcd against the one on files, in one run, on a local one-member etcd that
 * this benchmark starts (Debian's {@code etcd-server}; its WAL is fsynced like the files are):
 * <ol>
 *   <li>an uncontended acquire + release, etcd and files alternating in rounds (median of each,
 *       and their ratio per round);</li>
 *   <li>a holder killed → a newcomer that waits for it granted, with this JVM's
 *       {@link LeaseStore#keepHolders keeper} watching the holder (as {@code lease keep} does).</li>
 * </ol>
 * {@code mvn -B -Pbench verify -Dbench.main=dev.proclive.bench.EtcdBench}; the table is also written
 * to {@code target/etcd-results.md}.
 */
public final class EtcdBench {

    private EtcdBench() {
    }

    public static void main(String[] args) throws Exception {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        Path data = Files.createTempDirectory("proclive-etcd-bench");
        int client = freePort();
        int peer = freePort();
        String url = "http://127.0.0.1:" + client;
        Process etcd = new ProcessBuilder("etcd", "--name", "bench", "--data-dir", data.resolve("data").toString(),
                "--listen-client-urls", url, "--advertise-client-urls", url,
                "--listen-peer-urls", "http://127.0.0.1:" + peer, "--initial-advertise-peer-urls", "http://127.0.0.1:" + peer,
                "--initial-cluster", "bench=http://127.0.0.1:" + peer)
                .redirectErrorStream(true).redirectOutput(data.resolve("etcd.log").toFile()).start();
        try {
            awaitUp(URI.create(url));
            StringBuilder report = new StringBuilder();
            report.append(String.format(Locale.ROOT, "%s %s, %s %s, %d cores; etcd on loopback, one member%n%n",
                    System.getProperty("java.vm.name"), System.getProperty("java.version"), System.getProperty("os.name"),
                    System.getProperty("os.version"), Runtime.getRuntime().availableProcessors()));
            report.append("| measure | result | target |\n|---|---|---|\n");
            LeaseStore onEtcd = LeaseStore.builder().etcd(List.of(URI.create(url))).prefix("bench/").build();
            LeaseStore onFiles = LeaseStore.open(data.resolve("files"));
            Identity me = ProcLive.current().orElseThrow();
            for (int i = 0; i < 200; i++) { // warm both
                cycle(onEtcd, me);
                cycle(onFiles, me);
            }
            Etcd raw = EtcdGateway.open(List.of(URI.create(url)), java.util.Optional.empty(), Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper());
            int rounds = 10;
            int each = 100;
            double[] ratios = new double[rounds];
            double[] overRaw = new double[rounds];
            long[] etcdAll = new long[rounds * each];
            long[] filesAll = new long[rounds * each];
            long[] rawAll = new long[rounds * each];
            for (int r = 0; r < rounds; r++) {
                long[] e = new long[each];
                long[] f = new long[each];
                long[] w = new long[each];
                for (int i = 0; i < each; i++) {
                    e[i] = cycle(onEtcd, me);
                    f[i] = cycle(onFiles, me);
                    w[i] = rawWrites(raw);
                }
                System.arraycopy(e, 0, etcdAll, r * each, each);
                System.arraycopy(f, 0, filesAll, r * each, each);
                System.arraycopy(w, 0, rawAll, r * each, each);
                ratios[r] = (double) median(e) / median(f);
                overRaw[r] = (double) median(e) / median(w);
            }
            Arrays.sort(ratios);
            Arrays.sort(overRaw);
            report.append(String.format(Locale.ROOT, "| acquire + release, etcd (median of %d) | %.2f ms | |%n",
                    rounds * each, median(etcdAll) / 1e6));
            report.append(String.format(Locale.ROOT, "| acquire + release, files (median of %d) | %.2f ms | |%n",
                    rounds * each, median(filesAll) / 1e6));
            report.append(String.format(Locale.ROOT, "| the same two transactions by hand, etcd (median of %d) | %.2f ms | |%n",
                    rounds * each, median(rawAll) / 1e6));
            report.append(String.format(Locale.ROOT, "| etcd / files, per round (median; min–max of %d) | %.2f (%.2f–%.2f) | ≤ 1 |%n",
                    rounds, ratios[rounds / 2], ratios[0], ratios[rounds - 1]));
            report.append(String.format(Locale.ROOT, "| etcd / by hand, per round (median; min–max of %d) | %.2f (%.2f–%.2f) | |%n",
                    rounds, overRaw[rounds / 2], overRaw[0], overRaw[rounds - 1]));

            LeaseStore keeper = LeaseStore.builder().etcd(List.of(URI.create(url))).prefix("bench/").build();
            Thread keeping = new Thread(() -> {
                try {
                    keeper.keepHolders(Duration.ofMillis(100), line -> { });
                } catch (InterruptedException e) {
                    // stopped
                }
            }, "keeper");
            keeping.setDaemon(true);
            keeping.start();
            int kills = 30;
            long[] granted = new long[kills];
            LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(30)).build();
            for (int i = 0; i < kills; i++) {
                Process holder = new ProcessBuilder("sleep", "60").start();
                Identity h = ProcLive.identify(holder.pid()).orElseThrow();
                LeaseStore.builder().etcd(List.of(URI.create(url))).prefix("bench/").policy(policy).build().acquire("killed", h);
                Thread.sleep(300); // the keeper has picked it up
                Identity waiter = ProcLive.current().orElseThrow();
                LeaseStore newcomer = LeaseStore.builder().etcd(List.of(URI.create(url))).prefix("bench/").policy(policy).build();
                CompletableFuture<Long> at = CompletableFuture.supplyAsync(() -> {
                    try {
                        Acquisition a = newcomer.acquire("killed", waiter, Duration.ofSeconds(20));
                        long t = System.nanoTime();
                        if (a instanceof Acquisition.Granted g) {
                            g.lease().release();
                            return t;
                        }
                        throw new IllegalStateException("not granted: " + a);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                Thread.sleep(200);
                long killed = System.nanoTime();
                holder.destroyForcibly();
                granted[i] = at.get(30, TimeUnit.SECONDS) - killed;
                holder.waitFor();
            }
            keeping.interrupt();
            Arrays.sort(granted);
            report.append(String.format(Locale.ROOT,
                    "| holder killed → waiting newcomer granted (%d kills; median, max) | %.1f ms, %.1f ms | median ≤ 100 ms |%n",
                    kills, granted[kills / 2] / 1e6, granted[kills - 1] / 1e6));
            System.out.print(report);
            Files.writeString(target.resolve("etcd-results.md"), report);
        } finally {
            etcd.destroyForcibly();
            etcd.waitFor();
        }
    }

    private static long cycle(LeaseStore store, Identity me) throws IOException {
        long t = System.nanoTime();
        Acquisition.Granted g = (Acquisition.Granted) store.acquire("bench", me);
        g.lease().release();
        return System.nanoTime() - t;
    }

    /**
     * What an acquire + release writes, by hand: a grant's transaction (two compares, the fence key
     * and the record put, the reads of a broken compare) and a release's (two compares, one put).
     */
    private static long rawWrites(Etcd raw) throws IOException {
        String r = "hand/" + (++handKeys);
        String f = r + ".fence";
        long t = System.nanoTime();
        Etcd.Outcome g = raw.txn(List.of(new Etcd.Compare(r, 0), new Etcd.Compare(f, 0)),
                List.of(new Etcd.Put(f, RAW, 0), new Etcd.Put(r, RAW, 0)), List.of(new Etcd.Get(r), new Etcd.Get(f)));
        Etcd.Outcome e = raw.txn(List.of(new Etcd.Compare(r, g.revision()), new Etcd.Compare(f, g.revision())),
                List.of(new Etcd.Put(r, RAW, 0)), List.of(new Etcd.Get(r), new Etcd.Get(f)));
        long took = System.nanoTime() - t;
        if (!g.succeeded() || !e.succeeded()) {
            throw new IllegalStateException("the hand-made writes' compares failed");
        }
        return took;
    }

    private static long handKeys;

    private static final byte[] RAW = new byte[560];

    private static long median(long[] values) {
        long[] v = values.clone();
        Arrays.sort(v);
        return v[v.length / 2];
    }

    /** A loopback port nobody listens on now. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Waits until the etcd member at {@code url} answers a read. */
    static void awaitUp(URI url) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        for (int i = 0; i < 300; i++) {
            try {
                if (http.send(HttpRequest.newBuilder(url.resolve("/v3/kv/range")).POST(HttpRequest.BodyPublishers
                        .ofString("{\"key\":\"eA==\"}")).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("etcd did not start");
    }
}
