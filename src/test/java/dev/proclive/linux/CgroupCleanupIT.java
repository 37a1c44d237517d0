package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.Cgroups;
import dev.proclive.Eventually;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the library does to a command's cgroup once it is done with it, on real cgroups (root, or a
 * delegated cgroup v2 directory): it removes nothing of a subtree still populated, and a SIGKILL
 * reaches every process in it, those forked while it is sent too.
 */
class CgroupCleanupIT {

    private final LinuxDescendants cgroups = LinuxDescendants.INSTANCE;

    @BeforeEach
    void cgroupsCanBeMade() {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "cgroups are Linux's");
        assumeTrue(Cgroups.canBeMade(), "this JVM's cgroup v2 directory is not writable (run as root, or delegate it)");
    }

    private static boolean populated(String cgroup) throws Exception {
        return Files.readAllLines(Path.of(cgroup, "cgroup.events"), StandardCharsets.US_ASCII).contains("populated 1");
    }

    /** Ends whatever is left in {@code cgroup} and removes it: a test leaves no cgroup behind. */
    private void cleanUp(String cgroup, Process p) throws Exception {
        Path kill = Path.of(cgroup, "cgroup.kill");
        if (Files.isRegularFile(kill)) {
            Files.writeString(kill, "1");
        }
        p.destroyForcibly();
        p.waitFor();
        Eventually.until("the cgroup empty", Duration.ofSeconds(10), () -> !populated(cgroup));
        cgroups.remove(cgroup);
    }

    /**
     * A cgroup removed with its parent (systemd removes a stopped unit's whole subtree) is proven
     * gone: the nearest directory still there is a cgroup. Where that directory is no cgroup (no
     * cgroup2 file system at that path), nothing is proven.
     */
    @Test
    void aCgroupRemovedWithItsParentIsProvenGone() throws Exception {
        Path own = Cgroups.own().orElseThrow();
        Path unit = Files.createDirectory(own.resolve("proclive-test-unit." + ProcessHandle.current().pid()));
        Path made = Files.createDirectory(unit.resolve("proclive.build.0badc0de.0123456789ab"));
        String id = cgroups.cgroupId(made.toString()).orElseThrow();
        assertThat(cgroups.members(made.toString(), id)).contains(List.of());
        Files.delete(made);
        Files.delete(unit);
        assertThat(cgroups.members(made.toString(), id)).as("gone with its parent").contains(List.of());
        assertThat(cgroups.members("/nonexistent-cgroup-root/proclive.build.0badc0de.0123456789ab", id))
                .as("no cgroup to tell").isEmpty();
    }

    /**
     * A program inside that manages a cgroup of its own below the command's keeps it, empty as it
     * is, while the subtree is populated (it was removed under it when the store gave up waiting
     * for the command's cgroup to empty); once the subtree is empty, both go.
     */
    @Test
    void aPopulatedCgroupKeepsTheEmptyCgroupsBelowIt() throws Exception {
        String cgroup = cgroups.newCgroup("build", "cleanup").orElseThrow();
        String id = cgroups.cgroupId(cgroup).orElseThrow();
        Process p = new ProcessBuilder(cgroups.enter(cgroup, List.of("sleep", "600"))).start();
        try {
            Eventually.until("the command inside", Duration.ofSeconds(10),
                    () -> cgroups.members(cgroup, id).map(pids -> pids.contains(p.pid())).orElse(false));
            Path own = Files.createDirectory(Path.of(cgroup, "workers"));
            cgroups.remove(cgroup);
            assertThat(own).as("the program's own cgroup, empty, below a populated one").isDirectory();
            assertThat(Path.of(cgroup)).isDirectory();
        } finally {
            cleanUp(cgroup, p);
        }
        assertThat(Path.of(cgroup)).as("removed, with what was below, once empty").doesNotExist();
    }

    /**
     * A SIGKILL sent to a cgroup whose processes fork all the time leaves nothing alive: the
     * kernel's {@code cgroup.kill} kills what is forked meanwhile, where killing each pid as read
     * misses a child forked between the read and its parent's kill. Several rounds, as the fork
     * that slips through needs one.
     */
    @Test
    void aKillReachesWhatIsForkedWhileItIsSent() throws Exception {
        for (int round = 0; round < 5; round++) {
            String cgroup = cgroups.newCgroup("build", "cleanup").orElseThrow();
            assumeTrue(Files.isRegularFile(Path.of(cgroup, "cgroup.kill")), "no cgroup.kill (Linux before 5.14)");
            String id = cgroups.cgroupId(cgroup).orElseThrow();
            Process p = new ProcessBuilder(cgroups.enter(cgroup, List.of("/bin/sh", "-c",
                    "for i in 1 2 3 4 5 6 7 8; do (while :; do sleep 1000 & kill $! 2>/dev/null; done) & done; wait")))
                    .start();
            try {
                Eventually.until("the forkers inside", Duration.ofSeconds(10),
                        () -> cgroups.members(cgroup, id).map(pids -> pids.size() >= 9).orElse(false));
                cgroups.signal(cgroup, id, 9);
                int r = round;
                Eventually.until("round " + r + ": nothing left alive in the cgroup", Duration.ofSeconds(10),
                        () -> cgroups.members(cgroup, id).equals(Optional.of(List.of())));
            } finally {
                cleanUp(cgroup, p);
            }
        }
    }
}
