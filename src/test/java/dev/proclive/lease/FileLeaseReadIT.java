package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.CPrograms;
import dev.proclive.Children;
import dev.proclive.Cli;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The process that owns a record file (its last writer) may hold a read lease on it
 * ({@code fcntl F_SETLEASE F_RDLCK}). A read lease holds out only opens for writing: each one waits
 * for the lease's break, up to {@code /proc/sys/fs/lease-break-time} (45 s by default), and the
 * owner can take the lease again after each. {@code lease show} takes no lock and needs no write
 * access: it must not open the record for writing, so such a lease never stalls it.
 */
@EnabledOnOs(OS.LINUX)
class FileLeaseReadIT {

    @TempDir
    Path dir;

    @RegisterExtension
    final Children children = new Children();

    /** The lease store and a process holding a {@code kind} ("r" or "w") file lease on its record; skips where none can be taken. */
    private Path leasedRecord(String kind) throws Exception {
        return leased("x.lease", kind);
    }

    /** The lease store, lease x granted, and a process holding a {@code kind} file lease on its {@code file}. */
    private Path leased(String file, String kind) throws Exception {
        Path store = dir.resolve("store");
        long holder = children.sleeper().pid();
        assertThat(Cli.run("lease", "acquire", "x", "--dir", store.toString(), "--holder", Long.toString(holder)).exit())
                .isZero();
        Path program = CPrograms.compile(dir, "file_lease");
        Process lease = children.start(program.toString(), store.resolve(file).toString(), kind);
        String said = new BufferedReader(new InputStreamReader(lease.getInputStream(), StandardCharsets.US_ASCII))
                .readLine();
        assumeTrue("leased".equals(said), "no file lease on " + store + " here: " + said);
        return store;
    }

    /** {@code lease show x} under another process's {@code lease} on the record: it must end well inside a break. */
    private Cli.Result showWithin(Path store, long breakTime, String lease) throws Exception {
        long start = System.nanoTime();
        Cli.Result shown = Cli.run("lease", "show", "x", "--dir", store.toString());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).as("lease show under another process's " + lease + " on the record")
                .isLessThan(Duration.ofSeconds(breakTime / 2));
        return shown;
    }

    /** How long the kernel waits for a lease's break here; skips where that is too short to tell a stall. */
    private static long breakTime() throws Exception {
        long breakTime = Long.parseLong(Files.readAllLines(Path.of("/proc/sys/fs/lease-break-time")).get(0).strip());
        assumeTrue(breakTime >= 20, "a lease break here lasts " + breakTime + " s: too short to tell a stall");
        return breakTime;
    }

    @Test
    void aReadLeaseOnTheRecordDoesNotStallShow() throws Exception {
        long breakTime = breakTime();
        Cli.Result shown = showWithin(leasedRecord("r"), breakTime, "read lease");
        assertThat(shown.exit()).as(shown.toString()).isZero();
    }

    /**
     * A read lease on the guard holds out the open for writing that takes the lock: with O_NONBLOCK
     * it fails at once, the error says why (it said "[11]"), and nothing is changed.
     */
    @Test
    void aFileLeaseOnTheGuardIsSaidNotWaitedFor() throws Exception {
        long breakTime = breakTime();
        Path store = leased("x.guard", "r");
        String before = Files.readString(store.resolve("x.lease"));
        long start = System.nanoTime();
        Cli.Result released = Cli.run("lease", "release", "x", "--dir", store.toString(), "--fence", "1");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("a lock under another process's read lease on the guard")
                .isLessThan(Duration.ofSeconds(breakTime / 2));
        assertThat(released.exit()).as(released.toString()).isNotZero();
        assertThat(released.err()).contains("holds a file lease on it").doesNotContain("[11]");
        assertThat(Files.readString(store.resolve("x.lease"))).as("nothing changed").isEqualTo(before);
    }

    /** A write lease holds out every open; one with O_NONBLOCK fails at once, and the error says why. */
    @Test
    void aWriteLeaseOnTheRecordIsSaidNotWaitedFor() throws Exception {
        long breakTime = breakTime();
        Cli.Result shown = showWithin(leasedRecord("w"), breakTime, "write lease");
        assertThat(shown.exit()).as(shown.toString()).isEqualTo(74);
        assertThat(shown.err()).contains("holds a file lease on it");
    }
}
