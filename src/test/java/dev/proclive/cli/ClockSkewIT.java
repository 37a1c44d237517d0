package dev.proclive.cli;

import static dev.proclive.Tools.libfaketime;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.Children;
import dev.proclive.Cli;
import dev.proclive.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Over a directory, clocks apart never let {@code --take-unknown} take a lease whose live holder's
 * store keeps it: the holder runs {@code lease run} in a PID namespace of its own (UNKNOWN to a
 * newcomer outside, as another host's would be), and one of the two clocks is set 40 s apart
 * (libfaketime), far more than the TTL. Two newcomers ask, one after the other: the first's
 * cleaning leaves the holder's session file alone. Needs root for the PID namespace.
 */
@EnabledOnOs(OS.LINUX)
class ClockSkewIT {

    @RegisterExtension
    final Children children = new Children();

    @TempDir
    Path tmp;

    /**
     * 10 s, longer by how much slower this machine is now: the holder's store renews in time though its JVM, under
     * libfaketime, runs many times slower than one without (3 s was outrun once, a clean build beside other work).
     */
    private static final String TTL = Long.toString((long) Math.ceil(10 * Eventually.slowness()));

    /** A process's clock {@code offset} from this one's: the one at "+0" runs as it is, a JVM under libfaketime slower. */
    private static Map<String, String> clock(String lib, String offset) {
        return offset.equals("+0") ? Map.of()
                : Map.of("LD_PRELOAD", lib, "FAKETIME", offset, "FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }

    private Cli.Result newcomerOverAHolderElsewhere(String holderOffset, String newcomerOffset) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root for a PID namespace of the holder's own");
        String lib = libfaketime();
        String dir = tmp.resolve("leases").toString();
        Process running = holder(lib, holderOffset, dir);
        Path record = Path.of(dir, "build.lease");
        for (int tries = 1; !granted(record, Duration.ofSeconds(60)) && tries < 3; tries++) {
            // A JVM under libfaketime's LD_PRELOAD that hung as it started (seen now and then): again, over a
            // directory of its own, as a grant the one killed made late would leave its lease to an UNKNOWN holder.
            running.destroyForcibly();
            running.waitFor();
            dev.proclive.Cgroups.note(Path.of(dir));
            dir = tmp.resolve("leases" + tries).toString();
            running = holder(lib, holderOffset, dir);
            record = Path.of(dir, "build.lease");
        }
        try {
            Path said = Path.of(dir + ".err");
            assertThat(granted(record, Duration.ofSeconds(60))).as("the holder's grant (it said: %s)",
                    Files.exists(said) ? Files.readString(said) : "").isTrue();
            // its record's own write a TTL old: what keeps it fresh now is its store's session file
            Thread.sleep(Eventually.scaled(Duration.ofSeconds(2 * Long.parseLong(TTL))).toMillis());
            assertThat(running.isAlive()).as("the holder runs, its lease kept (it said: %s)",
                    Files.exists(said) ? Files.readString(said) : "").isTrue();
            List<String> acquire = Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir, "--holder",
                    Long.toString(children.sleeper().pid()), "--take-unknown");
            Cli.Result first = Cli.exec(acquire, new byte[0], clock(lib, newcomerOffset));
            assertThat(first.exit()).as("no second writer: %s %s", first.out(), first.err()).isEqualTo(2);
            // The first looked for dead writers' files once it let the lock go. It once removed the holder's session
            // file there (named by a pid of the holder's namespace, judged DEAD here), and the next was granted.
            try (var files = Files.list(Path.of(dir))) {
                assertThat(files.map(f -> f.getFileName().toString())).as("the holder's session file")
                        .anyMatch(f -> f.startsWith(".session.") && !f.endsWith(".tmp"));
            }
            return Cli.exec(acquire, new byte[0], clock(lib, newcomerOffset));
        } finally {
            running.destroyForcibly();
            running.waitFor();
            dev.proclive.Cgroups.note(Path.of(dir));
        }
    }

    /** Once every holder has ended: one killed -9 leaves its command's cgroup behind. */
    @org.junit.jupiter.api.AfterAll
    static void removeEmptyCgroups() throws java.io.IOException {
        dev.proclive.Cgroups.removeEmptyOfNoted();
    }

    /** {@code lease run build -- sleep 600} over {@code dir}, in a PID namespace of its own, its clock at {@code offset}. */
    private Process holder(String lib, String offset, String dir) throws Exception {
        List<String> run = new ArrayList<>(List.of("unshare", "-pf", "--kill-child", "--mount-proc"));
        run.addAll(Cli.command(Cli.jar(), "lease", "run", "build", "--dir", dir, "--ttl", TTL, "--", "sleep", "600"));
        ProcessBuilder holder = new ProcessBuilder(run).redirectError(Path.of(dir + ".err").toFile());
        holder.environment().putAll(clock(lib, offset));
        return children.adopt(holder.start());
    }

    /** Whether the holder's grant is in {@code record} within {@code quiet} scaled. */
    private static boolean granted(Path record, Duration quiet) throws Exception {
        try {
            Eventually.until("the holder's grant", quiet,
                    () -> Files.exists(record) && Files.readString(record).contains("\"sleep\""));
            return true;
        } catch (AssertionError notYet) {
            return false;
        }
    }

    @Test
    void aHolderWhoseClockIsBehindIsNotTakenOver() throws Exception {
        Cli.Result newcomer = newcomerOverAHolderElsewhere("-40s", "+0");
        assertThat(newcomer.exit()).as("no second writer: %s %s", newcomer.out(), newcomer.err()).isEqualTo(2);
    }

    @Test
    void aNewcomerWhoseClockIsAheadDoesNotTakeItOver() throws Exception {
        Cli.Result newcomer = newcomerOverAHolderElsewhere("+0", "+40s");
        assertThat(newcomer.exit()).as("no second writer: %s %s", newcomer.out(), newcomer.err()).isEqualTo(2);
    }
}
