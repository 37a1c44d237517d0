package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.Lease;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseStore;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What holding many leases costs one JVM, against holding one, in the same run: for N = 1 and
 * N = {@code bench.leases} (default 1,000), on a directory and on a one-member etcd this benchmark
 * starts (Debian's {@code etcd-server}), each lease acquired for this process and held for
 * {@code bench.hold} seconds (default 30) with a TTL of 15 s:
 * <ul>
 *   <li>{@code acquire}: wall time per lease while acquiring them one after another;</li>
 *   <li>{@code cpu}: this JVM's CPU time while holding, as a share of one core;</li>
 *   <li>{@code lost}: how many of the leases this JVM itself said lost while holding;</li>
 *   <li>on etcd, from the member's own metrics: writes (puts and deletes) per second, and watch
 *       streams opened per second, while holding;</li>
 *   <li>{@code threads}: the most of this JVM's {@code proclive-*} threads alive at once while
 *       holding, sampled each second, and their names.</li>
 * </ul>
 * Run it beside what the machine normally does (the figures of interest were taken beside two
 * loops of short-lived processes); ratios against N = 1 are what compare across machines.
 * {@code bench.backends} names the backends measured ({@code directory,etcd} by default), and
 * {@code bench.ttl} the TTL in seconds (a TTL past the hold leaves renewals out of the figures).
 * {@code mvn -B -Pbench verify -Dbench.main=dev.proclive.bench.ManyLeases}; written to
 * {@code target/many-leases.md} too.
 */
public final class ManyLeases {

    private ManyLeases() {
    }

    /** What one backend and one N measured. */
    record Figures(String backend, int leases, double acquireMillis, double cpuShare, int lost,
                   double writesPerSecond, double watchStreamsPerSecond, int threads, String threadNames) {
    }

    public static void main(String[] args) throws Exception {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        int many = Integer.getInteger("bench.leases", 1000);
        int hold = Integer.getInteger("bench.hold", 30);
        List<String> backends = List.of(System.getProperty("bench.backends", "directory,etcd").split(","));
        List<Figures> all = new ArrayList<>();
        Path dirs = Files.createTempDirectory("proclive-many-leases");
        for (int n : backends.contains("directory") ? new int[] {1, many} : new int[0]) {
            try (LeaseStore store = LeaseStore.builder().directory(dirs.resolve("n" + n)).policy(policy()).build()) {
                all.add(measure("directory", store, n, hold, null));
            }
        }
        if (!backends.contains("etcd")) {
            write(target, all, many, hold);
            return;
        }
        Path data = Files.createTempDirectory("proclive-many-leases-etcd");
        int client = EtcdBench.freePort();
        int peer = EtcdBench.freePort();
        String url = "http://127.0.0.1:" + client;
        Process etcd = new ProcessBuilder("etcd", "--name", "bench", "--data-dir", data.resolve("data").toString(),
                "--listen-client-urls", url, "--advertise-client-urls", url,
                "--listen-peer-urls", "http://127.0.0.1:" + peer, "--initial-advertise-peer-urls", "http://127.0.0.1:" + peer,
                "--initial-cluster", "bench=http://127.0.0.1:" + peer)
                .redirectErrorStream(true).redirectOutput(data.resolve("etcd.log").toFile()).start();
        try {
            EtcdBench.awaitUp(URI.create(url));
            for (int n : new int[] {1, many}) {
                try (LeaseStore store = LeaseStore.builder().etcd(List.of(URI.create(url))).prefix("bench/n" + n + "/")
                        .policy(policy()).build()) {
                    all.add(measure("etcd", store, n, hold, URI.create(url)));
                }
            }
        } finally {
            etcd.destroy();
            if (!etcd.waitFor(10, TimeUnit.SECONDS)) {
                etcd.destroyForcibly();
            }
        }
        write(target, all, many, hold);
    }

    private static void write(Path target, List<Figures> all, int many, int hold) throws IOException {
        String report = table(all, many, hold);
        System.out.print(report);
        Files.createDirectories(target);
        Files.writeString(target.resolve("many-leases.md"), report, StandardCharsets.UTF_8);
    }

    private static LeasePolicy policy() {
        return LeasePolicy.builder().ttl(Duration.ofSeconds(Integer.getInteger("bench.ttl", 15))).build();
    }

    private static Figures measure(String backend, LeaseStore store, int n, int holdSeconds, URI etcd) throws Exception {
        Identity me = ProcLive.current().orElseThrow();
        List<Lease> leases = new ArrayList<>(n);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            Acquisition a = store.acquire("lease-" + i, me);
            if (!(a instanceof Acquisition.Granted granted)) {
                throw new IllegalStateException("lease-" + i + " not granted: " + a);
            }
            leases.add(granted.lease());
        }
        double acquireMillis = (System.nanoTime() - start) / 1e6 / n;
        Thread.sleep(2_000); // what starting up set going settles
        double[] before = etcd == null ? null : etcdCounters(etcd);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long wall0 = System.nanoTime();
        java.util.SortedMap<String, Integer> threads = new java.util.TreeMap<>();
        int mostThreads = 0;
        for (int second = 0; second < holdSeconds; second++) {
            Thread.sleep(1000L);
            java.util.Map<String, Integer> now = new java.util.TreeMap<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("proclive")) {
                    now.merge(t.getName(), 1, Integer::sum);
                }
            }
            mostThreads = Math.max(mostThreads, now.values().stream().mapToInt(Integer::intValue).sum());
            now.forEach((name, count) -> threads.merge(name, count, Math::max));
        }
        long cpu = os.getProcessCpuTime() - cpu0;
        long wall = System.nanoTime() - wall0;
        double[] after = etcd == null ? null : etcdCounters(etcd);
        int lost = 0;
        for (Lease lease : leases) {
            if (lease.knownLost() || lease.lost().isDone()) {
                lost++;
                if (lost <= 3 && lease.lost().isDone()) {
                    System.err.println(lease.name() + " lost: " + lease.lost().getNow(null));
                }
            }
        }
        for (Lease lease : leases) {
            try {
                lease.release();
            } catch (IOException e) {
                // lost already: counted above
            }
        }
        double seconds = wall / 1e9;
        double writes = after == null ? Double.NaN : (after[0] - before[0]) / seconds;
        double streams = after == null ? Double.NaN : (after[1] - before[1]) / seconds;
        StringBuilder names = new StringBuilder();
        threads.forEach((name, count) -> names.append(names.length() == 0 ? "" : ", ").append(name)
                .append(count > 1 ? " ×" + count : ""));
        return new Figures(backend, n, acquireMillis, (double) cpu / wall, lost, writes, streams, mostThreads,
                names.toString());
    }

    private static final Pattern PUTS = Pattern.compile("(?m)^etcd_mvcc_(put|delete)_total(?:\\{[^}]*\\})? ([0-9.e+]+)$");
    private static final Pattern WATCHES =
            Pattern.compile("(?m)^grpc_server_started_total\\{[^}]*grpc_method=\"Watch\"[^}]*\\} ([0-9.e+]+)$");

    /** The member's count of writes (puts and deletes), and of watch streams started, so far. */
    private static double[] etcdCounters(URI etcd) throws Exception {
        String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(etcd.resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        double writes = 0;
        for (Matcher m = PUTS.matcher(metrics); m.find(); ) {
            writes += Double.parseDouble(m.group(2));
        }
        double watches = 0;
        for (Matcher m = WATCHES.matcher(metrics); m.find(); ) {
            watches += Double.parseDouble(m.group(1));
        }
        return new double[] {writes, watches};
    }

    private static String table(List<Figures> all, int many, int hold) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%s %s, %s %s, %d cores; TTL %d s, held %d s%n%n",
                System.getProperty("java.vm.name"), System.getProperty("java.version"), System.getProperty("os.name"),
                System.getProperty("os.version"), Runtime.getRuntime().availableProcessors(),
                Integer.getInteger("bench.ttl", 15), hold));
        out.append("| backend | leases | acquire, ms a lease | CPU while holding (one core) | lost | writes/s "
                + "| new watch streams/s | proclive threads (most at once) |\n");
        out.append("|---|---:|---:|---:|---:|---:|---:|---|\n");
        for (Figures f : all) {
            out.append(String.format(Locale.ROOT, "| %s | %d | %.2f | %.1f %% | %d | %s | %s | %d: %s |%n", f.backend(),
                    f.leases(), f.acquireMillis(), 100 * f.cpuShare(), f.lost(), number(f.writesPerSecond()),
                    number(f.watchStreamsPerSecond()), f.threads(), f.threadNames()));
        }
        out.append('\n');
        for (String backend : new String[] {"directory", "etcd"}) {
            Figures one = find(all, backend, 1);
            Figures lots = find(all, backend, many);
            if (one != null && lots != null) {
                out.append(String.format(Locale.ROOT, "%s: %d leases cost %.1f× one in CPU while holding%s%n", backend, many,
                        lots.cpuShare() / one.cpuShare(), Double.isNaN(lots.writesPerSecond()) ? ""
                                : String.format(Locale.ROOT, ", %.1f× its writes", lots.writesPerSecond()
                                        / Math.max(one.writesPerSecond(), 0.01))));
            }
        }
        return out.toString();
    }

    private static Figures find(List<Figures> all, String backend, int n) {
        for (Figures f : all) {
            if (f.backend().equals(backend) && f.leases() == n) {
                return f;
            }
        }
        return null;
    }

    private static String number(double d) {
        return Double.isNaN(d) ? "—" : String.format(Locale.ROOT, "%.1f", d);
    }
}
