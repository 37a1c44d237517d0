package dev.proclive.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link ProcLiveBenchmark} in rounds with the GC profiler and prints ratios, not bare times:
 * these machines are shared and noisy, and only figures measured close together compare. Each
 * round measures every benchmark once; a ratio is computed within a round, and the table shows
 * the median over rounds with the lowest and highest. Written to {@code target/bench-results.md}
 * too.
 *
 * <p>System properties: {@code bench.include} (a regex over method names), {@code bench.rounds}
 * (default 3), {@code bench.quick} (fewer iterations).
 */
public final class BenchMain {

    private BenchMain() {
    }

    /** One benchmark in one round. */
    record Sample(double ns, double bytes) { }

    public static void main(String[] args) throws RunnerException, IOException {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        String include = System.getProperty("bench.include", "");
        int rounds = Integer.getInteger("bench.rounds", 3);
        boolean quick = Boolean.getBoolean("bench.quick");

        List<Map<String, Sample>> all = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            OptionsBuilder options = new OptionsBuilder();
            options.include("dev\\.proclive\\.bench\\.(ProcLive|Lease)Benchmark\\.(" + (include.isEmpty() ? ".*" : include) + ")$")
                    .addProfiler(GCProfiler.class)
                    .forks(1)
                    .jvmArgsAppend("-Xmx256m");
            if (quick) {
                options.warmupIterations(2).measurementIterations(3);
            }
            Collection<RunResult> results = new Runner(options.build()).run();
            Map<String, Sample> samples = new TreeMap<>();
            for (RunResult r : results) {
                String name = r.getParams().getBenchmark();
                Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
                samples.put(name.substring(name.lastIndexOf('.') + 1), new Sample(r.getPrimaryResult().getScore(),
                        alloc == null ? Double.NaN : alloc.getScore()));
            }
            all.add(samples);
        }
        String report = report(all);
        if (include.isEmpty() || "contention".matches(include)) {
            report += contention(8, quick ? 3 : 10);
        }
        System.out.println();
        System.out.println(report);
        Files.createDirectories(target);
        Files.writeString(target.resolve("bench-results.md"), report, StandardCharsets.UTF_8);
    }

    /**
     * {@code processes} JVMs contending for one lease for {@code seconds}, each acquiring it for
     * itself and releasing it when granted: grants per process. None may be starved (zero).
     */
    static String contention(int processes, int seconds) throws IOException {
        Path dir = Files.createTempDirectory("proclive-contention");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> workers = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            workers.add(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    LeaseContention.class.getName(), dir.toString(), Integer.toString(seconds))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
                "%nLease contention: %d processes, %d s, one lease (grants / attempts per process):%n", processes, seconds));
        long total = 0;
        long starved = 0;
        for (Process p : workers) {
            String line = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            String[] f = line.split(" ");
            long grants = f.length == 2 ? Long.parseLong(f[0]) : 0;
            total += grants;
            starved += grants == 0 ? 1 : 0;
            out.append("  ").append(line.isEmpty() ? "failed" : line).append('\n');
        }
        out.append(String.format(Locale.ROOT, "- %-45s %d grants, %.0f per second; processes with none: %d  %s%n",
                "lease contention, " + processes + " processes", total, total / (double) seconds, starved,
                starved == 0 ? "met" : "NOT MET"));
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
        return out.toString();
    }

    /** What a ratio compares: a benchmark over another, each per operation. */
    record Ratio(String what, String numerator, String denominator, String op, double bound) { }

    static final List<Ratio> TARGETS = List.of(
            new Ratio("check of a live process / floor", "checkAlive", "floor", "<=", 1.15),
            new Ratio("ProcessHandle start instant / check", "processHandleStartInstant", "checkAlive", ">=", 3),
            new Ratio("OSHI getProcess / check", "oshiGetProcess", "checkAlive", ">=", 8),
            new Ratio("checkAll of 100 / raw reads of the same 100", "checkAll100", "floor100", "<=", 1.1),
            new Ratio("lease acquire + release / the same file work by hand", "leaseAcquireRelease", "leaseByHand",
                    "<=", 1.5),
            new Ratio("spawn + exit + release / start + waitFor + one forced guard write", "spawnUnderLease",
                    "spawnPlainAndGuardWrite", "<=", 1.5),
            new Ratio("ancestry() + 50 matches / one owner walk of the same chain", "ancestryAnd50Matches",
                    "ownerWalkOfTheChain", "<=", 1.2),
            new Ratio("tracked spawn (subreaper, a cgroup as root) / untracked spawn", "spawnTracked", "spawnUnderLease",
                    "<=", 1.5));

    static String report(List<Map<String, Sample>> rounds) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%s %s, %s %s, %d cores; %d rounds%n%n",
                System.getProperty("java.vm.name"), System.getProperty("java.version"),
                System.getProperty("os.name"), System.getProperty("os.version"),
                Runtime.getRuntime().availableProcessors(), rounds.size()));
        out.append("| benchmark | ns/op (median) | × floor (median, min–max) | B/op |\n|---|---:|---:|---:|\n");
        Map<String, Sample> first = rounds.get(0);
        for (String name : first.keySet()) {
            String floor = name.endsWith("100") ? "floor100" : name.startsWith("lease") ? "leaseByHand"
                    : name.startsWith("spawn") ? "spawnPlainAndGuardWrite" : "floor";
            List<Double> ns = values(rounds, name, null);
            List<Double> ratios = values(rounds, name, floor);
            out.append(String.format(Locale.ROOT, "| %s | %.0f | %s | %.0f |%n", name, median(ns),
                    ratios.isEmpty() ? "" : range(ratios), first.get(name).bytes()));
        }
        out.append("\nTargets, ratios within a round (median, min–max):\n");
        for (Ratio t : TARGETS) {
            List<Double> ratios = values(rounds, t.numerator(), t.denominator());
            if (ratios.isEmpty()) {
                continue;
            }
            double m = median(ratios);
            boolean met = t.op().equals("<=") ? m <= t.bound() : m >= t.bound();
            out.append(String.format(Locale.ROOT, "- %-45s %s  (target %s %s)  %s%n", t.what(), range(ratios),
                    t.op(), t.bound() == Math.rint(t.bound()) ? Long.toString((long) t.bound()) : Double.toString(t.bound()),
                    met ? "met" : "NOT MET"));
        }
        Sample check = first.get("checkAlive");
        if (check != null) {
            out.append(String.format(Locale.ROOT, "- %-45s %.0f  (target <= 256)  %s%n", "bytes allocated per check",
                    check.bytes(), check.bytes() <= 256 ? "met" : "NOT MET"));
        }
        return out.toString();
    }

    /** The benchmark's time per round, or its ratio to {@code over} per round. */
    private static List<Double> values(List<Map<String, Sample>> rounds, String name, String over) {
        List<Double> values = new ArrayList<>();
        for (Map<String, Sample> round : rounds) {
            Sample s = round.get(name);
            Sample o = over == null ? null : round.get(over);
            if (s != null && (over == null || o != null)) {
                values.add(over == null ? s.ns() : s.ns() / o.ns());
            }
        }
        return values;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String range(List<Double> ratios) {
        return String.format(Locale.ROOT, "%.2f (%.2f–%.2f)", median(ratios),
                ratios.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                ratios.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN));
    }
}
