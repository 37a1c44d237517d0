package dev.proclive.bench;

import dev.proclive.LivenessChecker;
import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.internal.KernelIntrospector;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * A reservation's scan for its token on a host with 2,000 more processes than usual, all started
 * before the reservation: with the reservation's start floor (what a newcomer does) and, for
 * comparison in the same run, without it (every environment read). Medians of 21 scans each,
 * alternating. {@code mvn -B -Pbench verify -Dbench.main=dev.proclive.bench.ReservationScanBench};
 * also written to {@code target/scan-results.md}.
 */
public final class ReservationScanBench {

    private ReservationScanBench() {
    }

    public static void main(String[] args) throws Exception {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        Process sh = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt 2000 ]; do sleep 300 & i=$((i+1)); done; "
                + "echo started; wait").start();
        try {
            new BufferedReader(new InputStreamReader(sh.getInputStream(), StandardCharsets.US_ASCII)).readLine();
            long processes;
            try (var s = Files.list(Path.of("/proc"))) {
                processes = s.filter(p -> p.getFileName().toString().matches("[0-9]+")).count();
            }
            KernelIntrospector system = KernelIntrospector.of(LivenessChecker.system().introspector());
            Optional<String> floor = system.startFloor();
            String token = "0123456789abcdef0123456789abcdef";
            long uid = system.userId(ProcessHandle.current().pid()).orElse(0);
            int runs = 21;
            long[] withFloor = new long[runs];
            long[] without = new long[runs];
            EnvironmentScan last = null;
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                last = system.scanEnvironments("PROCLIVE_LEASE_TOKEN", token::equals, uid, floor);
                long t1 = System.nanoTime();
                system.scanEnvironments("PROCLIVE_LEASE_TOKEN", token::equals, uid, Optional.empty());
                long t2 = System.nanoTime();
                withFloor[i] = t1 - t0;
                without[i] = t2 - t1;
            }
            Arrays.sort(withFloor);
            Arrays.sort(without);
            String report = String.format(Locale.ROOT, "%s %s, %s %s, %d cores; %d processes on the host%n%n"
                    + "| scan for a token | median | max | target |%n|---|---|---|---|%n"
                    + "| with the reservation's floor (reads the stat of each, the environment of none) | %.1f ms | %.1f ms | ≤ 50 ms |%n"
                    + "| without a floor (every environment read), beside it | %.1f ms | %.1f ms | |%n%n"
                    + "complete: %s, carriers: %d%n",
                    System.getProperty("java.vm.name"), System.getProperty("java.version"), System.getProperty("os.name"),
                    System.getProperty("os.version"), Runtime.getRuntime().availableProcessors(), processes,
                    withFloor[runs / 2] / 1e6, withFloor[runs - 1] / 1e6, without[runs / 2] / 1e6, without[runs - 1] / 1e6,
                    last.complete(), last.carriers().size());
            System.out.print(report);
            Files.writeString(target.resolve("scan-results.md"), report);
        } finally {
            sh.descendants().forEach(ProcessHandle::destroyForcibly);
            sh.destroyForcibly();
        }
    }
}
