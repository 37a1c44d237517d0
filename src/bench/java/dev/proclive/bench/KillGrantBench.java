package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.LeaseStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How long a waiting newcomer waits after the writer under {@code lease run} is killed, on a quiet
 * machine and under churn (two loops of short-lived processes, as a build beside it would run):
 * the command killed while {@code lease run} lives (its subreaper records the end), and {@code lease
 * run} killed together with its command (then only a cgroup, made as root, proves the end at once).
 * The waiter is this JVM's {@code acquire(name, holder, wait)}; the time is from the kill to its
 * {@code Granted}. {@code mvn -B -Pbench verify -Dbench.main=dev.proclive.bench.KillGrantBench};
 * the table is also written to {@code target/kill-grant-results.md}.
 */
public final class KillGrantBench {

    private KillGrantBench() {
    }

    public static void main(String[] args) throws Exception {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        Path jar = target.resolve("proclive-cli.jar").toAbsolutePath();
        int rounds = Integer.getInteger("bench.rounds", 15);
        StringBuilder report = new StringBuilder(String.format(Locale.ROOT, "%s %s, %s %s, %d cores, as %s; %d kills each%n%n",
                System.getProperty("java.vm.name"), System.getProperty("java.version"), System.getProperty("os.name"),
                System.getProperty("os.version"), Runtime.getRuntime().availableProcessors(),
                System.getProperty("user.name"), rounds));
        report.append("| what is killed | churn | kill → granted, median | p90 | max | not granted in 30 s |\n"
                + "|---|---|---:|---:|---:|---:|\n");
        for (boolean together : new boolean[] {false, true}) {
            for (boolean churn : new boolean[] {false, true}) {
                List<Process> loops = new ArrayList<>();
                if (churn) {
                    for (int i = 0; i < 2; i++) {
                        loops.add(new ProcessBuilder("sh", "-c", "while :; do /bin/true; done").start());
                    }
                }
                try {
                    report.append(row(together, churn, measure(jar, rounds, together)));
                } finally {
                    loops.forEach(Process::destroyForcibly);
                }
            }
        }
        System.out.print(report);
        Files.writeString(target.resolve("kill-grant-results.md"), report.toString());
    }

    /** Kill → granted in milliseconds, one per round; {@code -1} where the waiter was not granted. */
    private static double[] measure(Path jar, int rounds, boolean together) throws Exception {
        double[] ms = new double[rounds];
        Process other = new ProcessBuilder("sleep", "3600").start();
        Identity newcomer = ProcLive.identify(other.pid()).orElseThrow();
        try {
            for (int i = 0; i < rounds; i++) {
                Path dir = Files.createTempDirectory("proclive-kill-grant");
                Process run = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-jar", jar.toString(), "lease", "run", "k", "--dir", dir.toString(), "--", "sleep", "3600")
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
                try (LeaseStore store = LeaseStore.open(dir)) {
                    long command = heldBy(store, run.pid());
                    CompletableFuture<Long> granted = CompletableFuture.supplyAsync(() -> {
                        try {
                            Acquisition a = store.acquire("k", newcomer, Duration.ofSeconds(30));
                            long at = System.nanoTime();
                            return a instanceof Acquisition.Granted ? at : -1L;
                        } catch (Exception e) {
                            return -1L;
                        }
                    });
                    Thread.sleep(300); // the waiter waits on the holder's exit
                    long killed = System.nanoTime();
                    if (together) {
                        run.destroyForcibly();
                    }
                    ProcessHandle.of(command).ifPresent(ProcessHandle::destroyForcibly);
                    long at = granted.get(40, TimeUnit.SECONDS);
                    ms[i] = at < 0 ? -1 : (at - killed) / 1e6;
                } finally {
                    run.destroyForcibly();
                    run.waitFor();
                }
            }
        } finally {
            other.destroyForcibly();
        }
        return ms;
    }

    /** The pid of the command holding lease {@code k} (not {@code launcher}), once it holds it. */
    private static long heldBy(LeaseStore store, long launcher) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            Optional<LeaseRecord> r = store.read("k");
            if (r.isPresent() && r.get().held() && r.get().holder().pid() != launcher) {
                return r.get().holder().pid();
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException("lease run never handed the lease to its command");
    }

    private static String row(boolean together, boolean churn, double[] ms) {
        double[] granted = Arrays.stream(ms).filter(m -> m >= 0).sorted().toArray();
        long missed = Arrays.stream(ms).filter(m -> m < 0).count();
        String what = together ? "`lease run` and its command" : "the command (`lease run` lives)";
        if (granted.length == 0) {
            return String.format(Locale.ROOT, "| %s | %s | – | – | – | %d |%n", what, churn ? "2 loops" : "none", missed);
        }
        return String.format(Locale.ROOT, "| %s | %s | %.1f ms | %.1f ms | %.1f ms | %d |%n", what,
                churn ? "2 loops" : "none", granted[granted.length / 2],
                granted[Math.min(granted.length - 1, (int) Math.ceil(granted.length * 0.9) - 1)],
                granted[granted.length - 1], missed);
    }
}
