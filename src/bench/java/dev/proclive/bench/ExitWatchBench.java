package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.Verdict;
import dev.proclive.linux.LinuxProcessIntrospector;
import dev.proclive.spi.internal.ExitEvents;
import dev.proclive.spi.internal.KernelIntrospector;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.internal.ProgramNames;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The exit watch measured on Linux, in one run (not JMH: what counts is latency from a kill to a
 * completion, threads and idle CPU, not the cost of a call):
 * <ol>
 *   <li>exit → completion with pidfds, over 1,000 exits (median, p99, max);</li>
 *   <li>the same through the polling fallback (pidfds withheld), over 100 exits;</li>
 *   <li>threads added by 1,000 watches of processes that are not this JVM's children, beside
 *       the JDK's {@code ProcessHandle.onExit()} for the same processes;</li>
 *   <li>CPU used by this JVM while 10,000 watches sit idle for 10 s;</li>
 *   <li>a JVM's exit, from its {@code System.exit} to its end, with and without a pending watch
 *       (child JVMs, alternating).</li>
 * </ol>
 * {@code mvn -B -Pbench verify -Dbench.main=dev.proclive.bench.ExitWatchBench}; the table is also
 * written to {@code target/exit-watch-results.md}.
 */
public final class ExitWatchBench {

    private ExitWatchBench() {
    }

    public static void main(String[] args) throws Exception {
        Path target = Path.of(args.length > 0 ? args[0] : "target");
        StringBuilder report = new StringBuilder();
        report.append(String.format(Locale.ROOT, "%s %s, %s %s, %d cores%n%n", System.getProperty("java.vm.name"),
                System.getProperty("java.version"), System.getProperty("os.name"), System.getProperty("os.version"),
                Runtime.getRuntime().availableProcessors()));
        report.append("| measure | result | target |\n|---|---|---|\n");

        long[] pidfd = latencies(ProcLive::onExit, 1000);
        report.append(row("exit → completion, pidfd (1,000 exits)", pidfd, "median ≤ 2 ms, p99 ≤ 10 ms"));
        LivenessChecker polling = LivenessChecker.of(new WithoutExitEvents(LinuxProcessIntrospector.system()));
        long[] polled = latencies(polling::onExit, 100);
        report.append(row("exit → completion, polling fallback (100 exits)", polled, "p99 ≤ 1.5 s"));

        report.append(threads());
        report.append(idleCpu());
        report.append(exits(15));
        System.out.print(report);
        Files.writeString(target.resolve("exit-watch-results.md"), report.toString());
    }

    /**
     * A child JVM's {@code System.exit} to its end, seen by this one ({@code System.nanoTime} is
     * one clock for every process on Linux), with no watch and with one pending, alternating.
     */
    private static String exits(int runs) throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "600").start();
        try {
            long[] without = new long[runs];
            long[] with = new long[runs];
            for (int i = 0; i < runs; i++) {
                without[i] = exit(sleeper.pid(), false);
                with[i] = exit(sleeper.pid(), true);
            }
            Arrays.sort(without);
            Arrays.sort(with);
            double a = ms(without[runs / 2]);
            double b = ms(with[runs / 2]);
            return String.format(Locale.ROOT, "| a JVM's exit (System.exit to its end), median of %d each, alternating |"
                    + " no watch %.1f ms; one pending watch %.1f ms (+%.1f ms) | never slowed |%n", runs, a, b, b - a);
        } finally {
            sleeper.destroyForcibly();
            sleeper.waitFor();
        }
    }

    private static long exit(long pid, boolean watch) throws Exception {
        Process jvm = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), ExitingMain.class.getName(), Long.toString(pid),
                Boolean.toString(watch)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        jvm.waitFor();
        long ended = System.nanoTime();
        if (line == null || jvm.exitValue() != 0) {
            throw new IllegalStateException("the exiting JVM failed: " + line);
        }
        return ended - Long.parseLong(line.trim());
    }

    /** Watches {@code args[0]} if {@code args[1]} says so, prints {@code System.nanoTime()}, exits. */
    public static final class ExitingMain {
        private ExitingMain() {
        }

        public static void main(String[] args) throws Exception {
            Identity id = ProcLive.identify(Long.parseLong(args[0])).orElseThrow();
            if (Boolean.parseBoolean(args[1])) {
                ProcLive.onExit(id);
            } else {
                ProcLive.check(id);
            }
            Thread.sleep(100); // the watch is waiting by now
            System.out.println(System.nanoTime());
            System.out.flush();
            System.exit(0);
        }
    }

    interface Watcher {
        CompletableFuture<Verdict> onExit(Identity id);
    }

    /** Kills {@code exits} watched sleepers one at a time: nanoseconds from each kill to its completion. */
    private static long[] latencies(Watcher watcher, int exits) throws Exception {
        long[] nanos = new long[exits];
        int batch = 50;
        for (int done = 0; done < exits; done += batch) {
            List<Process> ps = new ArrayList<>();
            List<CompletableFuture<Verdict>> ends = new ArrayList<>();
            for (int i = 0; i < Math.min(batch, exits - done); i++) {
                Process p = new ProcessBuilder("sleep", "60").start();
                ps.add(p);
                ends.add(watcher.onExit(ProcLive.identify(p.pid()).orElseThrow()));
            }
            Thread.sleep(1200); // let a polling watch back off to its slowest, as a long-lived one would be
            for (int i = 0; i < ps.size(); i++) {
                long killed = System.nanoTime();
                ps.get(i).destroyForcibly();
                Verdict v = ends.get(i).get(30, TimeUnit.SECONDS);
                nanos[done + i] = System.nanoTime() - killed;
                if (v.liveness() != Liveness.DEAD) {
                    throw new IllegalStateException("not dead: " + v);
                }
            }
        }
        Arrays.sort(nanos);
        return nanos;
    }

    private static String row(String what, long[] sorted, String target) {
        return String.format(Locale.ROOT, "| %s | median %.2f ms, p99 %.2f ms, max %.2f ms | %s |%n", what,
                ms(sorted[sorted.length / 2]), ms(sorted[(int) Math.ceil(sorted.length * 0.99) - 1]),
                ms(sorted[sorted.length - 1]), target);
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    /** Starts {@code n} sleepers as children of a shell, not of this JVM; their pids. */
    private static List<Long> grandchildren(int n, int seconds) throws IOException {
        Process sh = new ProcessBuilder("sh", "-c", "i=0; while [ $i -lt " + n + " ]; do sleep " + seconds
                + " & echo $!; i=$((i+1)); done; echo end; wait").start();
        BufferedReader out = new BufferedReader(new InputStreamReader(sh.getInputStream(), StandardCharsets.US_ASCII));
        List<Long> pids = new ArrayList<>();
        for (String line = out.readLine(); line != null && !line.equals("end"); line = out.readLine()) {
            pids.add(Long.parseLong(line));
        }
        return pids;
    }

    private static void kill(List<Long> pids) {
        pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    private static String threads() throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        List<Long> pids = grandchildren(1000, 120);
        List<Identity> ids = new ArrayList<>();
        for (long pid : pids) {
            ids.add(ProcLive.identify(pid).orElseThrow());
        }
        Thread.sleep(500);
        int before = mx.getThreadCount();
        List<CompletableFuture<Verdict>> ours = new ArrayList<>();
        for (Identity id : ids) {
            ours.add(ProcLive.onExit(id));
        }
        Thread.sleep(1000);
        int withOurs = mx.getThreadCount();
        List<CompletableFuture<ProcessHandle>> jdks = new ArrayList<>();
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(h -> jdks.add(h.onExit()));
        }
        Thread.sleep(1000);
        int withJdks = mx.getThreadCount();
        kill(pids);
        CompletableFuture.allOf(ours.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        return String.format(Locale.ROOT, "| threads added by 1,000 watches of non-children | proclive %d; "
                + "the JDK's ProcessHandle.onExit() for the same processes, beside it: %d | ≤ 2 |%n",
                withOurs - before, withJdks - withOurs);
    }

    private static String idleCpu() throws Exception {
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        List<Long> pids = grandchildren(1000, 120);
        List<CompletableFuture<Verdict>> watches = new ArrayList<>();
        for (long pid : pids) {
            Identity id = ProcLive.identify(pid).orElseThrow();
            for (int i = 0; i < 10; i++) {
                watches.add(ProcLive.onExit(id));
            }
        }
        Thread.sleep(2000);
        Thread watcher = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("proclive-exit-watch")).findFirst().orElseThrow();
        long watcherBefore = mx.getThreadCpuTime(watcher.getId());
        long processBefore = os.getProcessCpuTime();
        Thread.sleep(10_000);
        long watcherCpu = mx.getThreadCpuTime(watcher.getId()) - watcherBefore;
        long processCpu = os.getProcessCpuTime() - processBefore;
        kill(pids);
        CompletableFuture.allOf(watches.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        return String.format(Locale.ROOT, "| CPU while 10,000 watches (of 1,000 processes) sit idle for 10 s |"
                + " the watching thread %.3f ms; the whole JVM %.1f ms | ≈ 0 |%n", ms(watcherCpu), ms(processCpu));
    }

    /** The system introspector with its exit events withheld: every watch polls. */
    private static final class WithoutExitEvents implements KernelIntrospector {
        private final KernelIntrospector system;

        WithoutExitEvents(ProcessIntrospector system) {
            this.system = KernelIntrospector.of(system);
        }

        @Override
        public ProcessLookup lookup(long pid) {
            return system.lookup(pid);
        }

        @Override
        public ProcessLookup lookupProcess(long pid) {
            return system.lookupProcess(pid);
        }

        @Override
        public ProcessLookup self() {
            return system.self();
        }

        @Override
        public boolean sameStart(String recorded, String current) {
            return system.sameStart(recorded, current);
        }

        @Override
        public ProgramNames programNames(long pid) {
            return system.programNames(pid);
        }

        @Override
        public Optional<String> bootId() {
            return system.bootId();
        }

        @Override
        public Optional<String> hostName() {
            return system.hostName();
        }

        @Override
        public Optional<String> pidNamespace() {
            return system.pidNamespace();
        }

        @Override
        public Optional<String> machineId() {
            return system.machineId();
        }

        @Override
        public boolean inInitialPidNamespace() {
            return system.inInitialPidNamespace();
        }

        @Override
        public boolean supported() {
            return system.supported();
        }

        @Override
        public Optional<String> startFloor() {
            return system.startFloor();
        }

        @Override
        public boolean nameMatches(String processName, String name) {
            return system.nameMatches(processName, name);
        }

        @Override
        public Optional<ExitEvents> openExitEvents() {
            return Optional.empty(); // what this wrapper is for: every watch polls
        }
    }
}
