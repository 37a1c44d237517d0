package dev.proclive.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link ProcLiveBenchmark} with the GC profiler and prints ratios, not bare times: these
 * machines are shared and noisy, and only figures measured in the same run compare. Writes the
 * table to {@code target/bench-results.md} too.
 */
public final class BenchMain {

    private BenchMain() {
    }

    record Row(double ns, double error, double bytes) { }

    public static void main(String[] args) throws RunnerException, IOException {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        OptionsBuilder options = new OptionsBuilder();
        String include = System.getProperty("bench.include", "");
        options.include(ProcLiveBenchmark.class.getName() + "\\.(" + (include.isEmpty() ? ".*" : include) + ")$")
                .addProfiler(GCProfiler.class)
                .jvmArgsAppend("-Xmx256m");
        if (Boolean.getBoolean("bench.quick")) {
            options.forks(1).warmupIterations(2).measurementIterations(3);
        }
        Options built = options.build();
        Collection<RunResult> results = new Runner(built).run();

        Map<String, Row> rows = new LinkedHashMap<>();
        for (RunResult r : results) {
            String name = r.getParams().getBenchmark();
            name = name.substring(name.lastIndexOf('.') + 1);
            Result<?> primary = r.getPrimaryResult();
            Result<?> alloc = r.getSecondaryResults().get("gc.alloc.rate.norm");
            rows.put(name, new Row(primary.getScore(), primary.getScoreError(),
                    alloc == null ? Double.NaN : alloc.getScore()));
        }
        String table = table(rows);
        System.out.println();
        System.out.println(table);
        Files.createDirectories(target);
        Files.writeString(target.resolve("bench-results.md"), table, StandardCharsets.UTF_8);
    }

    static String table(Map<String, Row> rows) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%s %s, %s %s, %d cores%n%n", System.getProperty("java.vm.name"),
                System.getProperty("java.version"), System.getProperty("os.name"), System.getProperty("os.version"),
                Runtime.getRuntime().availableProcessors()));
        Row floor = rows.get("floor");
        out.append("| benchmark | ns/op | ± | × floor | B/op |\n|---|---:|---:|---:|---:|\n");
        for (Map.Entry<String, Row> e : rows.entrySet()) {
            Row r = e.getValue();
            double per = e.getKey().endsWith("100") ? ProcLiveBenchmark.BATCH : 1;
            out.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f | %s | %.0f |%n", e.getKey(), r.ns(), r.error(),
                    floor == null ? "" : String.format(Locale.ROOT, "%.2f%s", r.ns() / (floor.ns() * per),
                            per > 1 ? " (per identity)" : ""),
                    r.bytes()));
        }
        Row check = rows.get("checkAlive");
        if (floor != null && check != null) {
            out.append("\nTargets (same run):\n");
            target(out, "check of a live process vs the floor", check.ns() / floor.ns(), "<=", 1.15);
            target(out, "bytes allocated per check", check.bytes(), "<=", 256);
            Row handle = rows.get("processHandleStartInstant");
            if (handle != null) {
                target(out, "ProcessHandle start-instant lookup vs check", handle.ns() / check.ns(), ">=", 3);
            }
            Row oshi = rows.get("oshiGetProcess");
            if (oshi != null) {
                target(out, "OSHI getProcess vs check", oshi.ns() / check.ns(), ">=", 8);
            }
            Row all = rows.get("checkAll100");
            Row floor100 = rows.get("floor100");
            if (all != null && floor100 != null) {
                target(out, "checkAll of 100 vs the floor of the same 100", all.ns() / floor100.ns(), "<=", 1.1);
            }
        }
        return out.toString();
    }

    private static void target(StringBuilder out, String what, double value, String op, double bound) {
        boolean met = op.equals("<=") ? value <= bound : value >= bound;
        out.append(String.format(Locale.ROOT, "- %-45s %8.2f  (target %s %s)  %s%n", what, value, op,
                bound == Math.rint(bound) ? Long.toString((long) bound) : Double.toString(bound),
                met ? "met" : "NOT MET"));
    }
}
