package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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

/**
 * An uncontended acquire + release against the same forced writes done by hand, in one run: lock
 * the guard, write a temporary file, force it, move it over the record atomically — twice (a grant
 * and a release each write a record) — and the grant's new fence written to the guard and forced.
 * A spawn against a bare start plus that one forced guard write.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class LeaseBenchmark {

    private Path dir;
    private LeaseStore store;
    private LeaseStore tracked;
    private Identity holder;
    private final byte[] record = ("{\"name\":\"bench\",\"fence\":1,\"state\":\"held\",\"holder\":{\"pid\":1,\"start\":\"1\"},"
            + "\"writer\":{\"pid\":1,\"start\":\"1\"},\"acquiredAt\":\"2026-11-29T10:00:00.000Z\","
            + "\"renewedAt\":\"2026-11-29T10:00:00.000Z\",\"ttlMillis\":30000}\n").getBytes(StandardCharsets.UTF_8);

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("proclive-lease-bench");
        store = LeaseStore.open(dir.resolve("store"));
        tracked = LeaseStore.builder().directory(dir.resolve("tracked"))
                .policy(dev.proclive.lease.LeasePolicy.builder().trackDescendants(true).build()).build();
        holder = ProcLive.current().orElseThrow();
        Files.createDirectories(dir.resolve("hand"));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Benchmark
    public long leaseAcquireRelease() throws IOException {
        Acquisition a = store.acquire("bench", holder);
        Acquisition.Granted granted = (Acquisition.Granted) a;
        granted.lease().release();
        return granted.lease().fence();
    }

    /** A command under the lease: reserve, start, hand off, wait for its exit, end the lease as exited. */
    @Benchmark
    public int spawnUnderLease() throws Exception {
        Acquisition.Started s = (Acquisition.Started) store.spawn("spawned", new ProcessBuilder("true"));
        int status = s.process().waitFor();
        s.lease().exited(status);
        return status;
    }

    /**
     * As {@link #spawnUnderLease}, its descendants tracked by the kernel: this JVM a subreaper and,
     * as root, the command started in a cgroup of its own (made, entered, read and removed per spawn).
     */
    @Benchmark
    public int spawnTracked() throws Exception {
        Acquisition.Started s = (Acquisition.Started) tracked.spawn("spawned", new ProcessBuilder("true"));
        int status = s.process().waitFor();
        s.lease().exited(status);
        return status;
    }

    /** The same command started and waited for, with no lease. */
    @Benchmark
    public int spawnPlain() throws Exception {
        return new ProcessBuilder("true").start().waitFor();
    }

    /** A bare start and wait plus the one forced guard write a grant needs: what spawnUnderLease is compared with. */
    @Benchmark
    public int spawnPlainAndGuardWrite() throws Exception {
        int status = new ProcessBuilder("true").start().waitFor();
        try (FileChannel guard = FileChannel.open(dir.resolve("hand").resolve("spawn.guard"), StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            guard.write(ByteBuffer.wrap(FENCE), 0);
            guard.force(false);
        }
        return status;
    }

    private static final byte[] FENCE = "12".getBytes(StandardCharsets.US_ASCII);

    @Benchmark
    public long leaseByHand() throws IOException {
        Path hand = dir.resolve("hand");
        long written = 0;
        for (int i = 0; i < 2; i++) {
            try (FileChannel guard = FileChannel.open(hand.resolve("bench.guard"), StandardOpenOption.CREATE,
                    StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                guard.lock();
                Path tmp = hand.resolve(".bench.tmp");
                try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE,
                        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
                    written += out.write(ByteBuffer.wrap(record));
                    out.force(true);
                }
                Files.move(tmp, hand.resolve("bench.lease"), StandardCopyOption.ATOMIC_MOVE);
                if (i == 0) { // the grant's fence
                    guard.write(ByteBuffer.wrap(FENCE), 0);
                    guard.force(false);
                }
            }
        }
        return written;
    }
}
