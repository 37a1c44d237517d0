package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Verdict;
import java.io.FileInputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import oshi.SystemInfo;
import oshi.software.os.OSProcess;
import oshi.software.os.OperatingSystem;

/**
 * proclive against the floor (one open+read+close of {@code /proc/PID/stat} into a reused buffer)
 * and against its peers, all on the same live process, in one run. Linux only.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ProcLiveBenchmark {

    /** How many live processes {@link #checkAll100} judges at once. */
    public static final int BATCH = 100;

    private final List<Process> children = new ArrayList<>();
    private long pid;
    private String statPath;
    private final byte[] buffer = new byte[1024];
    private Identity alive;
    private Identity dead;
    private List<Identity> batch;
    private List<Identity> owners;
    private dev.proclive.OwnerResolver wholeChain;
    private String[] batchPaths;
    private OperatingSystem oshi;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        Process sleeper = sleeper();
        pid = sleeper.pid();
        statPath = "/proc/" + pid + "/stat";
        alive = ProcLive.identify(pid).orElseThrow();

        Process doomed = sleeper();
        dead = ProcLive.identify(doomed.pid()).orElseThrow();
        doomed.destroyForcibly();
        doomed.waitFor();
        children.remove(doomed);

        owners = new ArrayList<>();
        for (int i = 0; i < 49; i++) { // 49 recorded owners that are not ancestors, and the real one
            owners.add(new Identity(4_000_000 + i, "12345", alive.boot(), alive.host(), "agent", alive.pidns()));
        }
        owners.add(ProcLive.resolveOwner().orElse(alive));
        // The owner walk over the same chain: every ancestor's name skipped, so it reads what ancestry reads.
        String[] names = ProcLive.ancestry().chain().stream().map(Identity::name).distinct().toArray(String[]::new);
        wholeChain = dev.proclive.OwnerResolver.builder().skip(names).maxDepth(dev.proclive.Ancestry.MAX_DEPTH).build();
        batch = new ArrayList<>();
        batchPaths = new String[BATCH];
        for (int i = 0; i < BATCH; i++) {
            long p = sleeper().pid();
            batch.add(ProcLive.identify(p).orElseThrow());
            batchPaths[i] = "/proc/" + p + "/stat";
        }
        oshi = new SystemInfo().getOperatingSystem();
        if (ProcLive.check(alive) != Liveness.ALIVE || ProcLive.check(dead) != Liveness.DEAD
                || oshi.getProcess((int) pid) == null || ProcLive.resolveOwner().isEmpty()) {
            throw new IllegalStateException("the benchmark's processes are not what they should be");
        }
    }

    private Process sleeper() throws IOException {
        Process p = new ProcessBuilder("sleep", "3600").start();
        children.add(p);
        return p;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        for (Process p : children) {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    /** The floor: the kernel's cost for the one file a check must read. */
    @Benchmark
    public int floor() throws IOException {
        try (FileInputStream in = new FileInputStream(statPath)) {
            return in.read(buffer);
        }
    }

    /** The floor of a batch: the same raw read of each of the batch's 100 stat files. */
    @Benchmark
    public int floor100() throws IOException {
        int total = 0;
        for (String path : batchPaths) {
            try (FileInputStream in = new FileInputStream(path)) {
                total += in.read(buffer);
            }
        }
        return total;
    }

    @Benchmark
    public Liveness checkAlive() {
        return ProcLive.check(alive);
    }

    @Benchmark
    public Liveness checkDead() {
        return ProcLive.check(dead);
    }

    @Benchmark
    public Verdict explainAlive() {
        return ProcLive.explain(alive);
    }

    @Benchmark
    public Optional<Identity> identify() {
        return ProcLive.identify(pid);
    }

    @Benchmark
    public Optional<Identity> resolveOwner() {
        return ProcLive.resolveOwner();
    }

    /** One owner walk over the whole chain ancestry() reads (every name skipped): the baseline of the one below. */
    @Benchmark
    public Optional<Identity> ownerWalkOfTheChain() {
        return wholeChain.resolve();
    }

    /** One ancestry snapshot and 50 recorded owners matched against it: what a commit hook does. */
    @Benchmark
    public int ancestryAnd50Matches() {
        dev.proclive.Ancestry a = ProcLive.ancestry();
        int found = 0;
        for (Identity owner : owners) {
            found += a.depthOf(owner).isPresent() ? 1 : 0;
        }
        return found;
    }

    @Benchmark
    public List<Verdict> checkAll100() {
        return ProcLive.checkAll(batch);
    }

    /** What a plain-JDK check would read: the start instant of the same process. */
    @Benchmark
    public Optional<Instant> processHandleStartInstant() {
        return ProcessHandle.of(pid).flatMap(h -> h.info().startInstant());
    }

    @Benchmark
    public OSProcess oshiGetProcess() {
        return oshi.getProcess((int) pid);
    }
}
