package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * Starting a writer under a lease, with real processes: a spawn, a launcher SIGKILLed before the
 * start, between the start and the hand-off, and after; a child that exits at once; a command
 * that does not exist; a carrier that is a grandchild whose parent exited.
 */
@EnabledOnOs(OS.LINUX)
class LeaseSpawnIT {

    @TempDir
    Path tmp;
    final Children children = new Children();
    final List<Process> workers = new ArrayList<>();
    final List<Long> orphans = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : workers) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        orphans.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        children.killAll();
    }

    private Path leases() {
        return tmp.resolve("leases");
    }

    /** Starts a launcher at {@code stage}, reads its line, SIGKILLs it; the line. */
    private String killedLauncher(String stage) throws Exception {
        List<String> command = dev.proclive.JavaMain.command(List.of(), LeaseWorker.class, "launch", leases().toString(),
                "build", stage);
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.add(p);
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII)).readLine();
        assertThat(line).as(stage).isNotNull();
        if (!stage.equals("before-start")) {
            orphans.add(Long.parseLong(line));
        }
        p.destroyForcibly(); // SIGKILL
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return line;
    }

    private Identity newcomer() throws IOException {
        return ProcLive.identify(children.start("sleep", "60").pid()).orElseThrow();
    }

    @Test
    void spawnStartsTheChildUnderTheLeaseWithItsReservationInItsEnvironment() throws Exception {
        LeaseStore store = LeaseStore.open(leases());
        Spawn s = store.spawn("build", new ProcessBuilder("sleep", "60"));
        assertThat(s).isInstanceOf(Spawn.Started.class);
        Spawn.Started started = (Spawn.Started) s;
        orphans.add(started.process().pid());
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(r.holder().pid()).isEqualTo(started.process().pid());
        assertThat(r.fence()).isEqualTo(1).isEqualTo(started.lease().fence());
        String environ = Files.readString(Path.of("/proc/" + started.process().pid() + "/environ"), StandardCharsets.ISO_8859_1);
        assertThat(environ.split("\0")).contains("PROCLIVE_LEASE_TOKEN=" + r.token().orElseThrow(),
                "PROCLIVE_LEASE_NAME=build", "PROCLIVE_LEASE_DIR=" + store.directory(), "PROCLIVE_LEASE_FENCE=1");
        assertThat(store.spawn("build", new ProcessBuilder("sleep", "60"))).as("a second writer is not started")
                .isInstanceOf(Spawn.Held.class);
    }

    @Test
    void aLauncherKilledBeforeItStartedAnythingLeavesAReservationThatIsFreed() throws Exception {
        assertThat(killedLauncher("before-start")).isEqualTo("reserved");
        LeaseStore store = LeaseStore.open(leases());
        assertThat(store.read("build").orElseThrow().state()).isEqualTo(LeaseRecord.State.RESERVED);
        Acquisition a = store.acquire("build", newcomer());
        assertThat(a).as("a complete scan found no carrier and the reserver is dead").isInstanceOf(Acquisition.Granted.class);
        LeaseRecord r = ((Acquisition.Granted) a).lease().record();
        assertThat(r.fence()).isEqualTo(2);
        assertThat(r.previous().orElseThrow().verdict().liveness()).isEqualTo(Liveness.DEAD);
    }

    @Test
    void aLauncherKilledBetweenStartAndHandOffLeavesTheLeaseToItsChild() throws Exception {
        long child = Long.parseLong(killedLauncher("before-handoff"));
        LeaseStore store = LeaseStore.open(leases());
        Acquisition a = store.acquire("build", newcomer());
        assertThat(a).as("the child carries the token").isInstanceOf(Acquisition.Held.class);
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.holder().pid()).isEqualTo(child);
        assertThat(r.adoptedBy()).contains("token");
        assertThat(r.fence()).isEqualTo(1);
    }

    @Test
    void aCarrierThatIsAGrandchildWhoseParentExitedIsAdopted() throws Exception {
        long grandchild = Long.parseLong(killedLauncher("grandchild"));
        LeaseStore store = LeaseStore.open(leases());
        assertThat(store.acquire("build", newcomer())).isInstanceOf(Acquisition.Held.class);
        assertThat(store.read("build").orElseThrow().holder().pid()).isEqualTo(grandchild);
    }

    @Test
    void aLauncherKilledAfterTheHandOffChangesNothing() throws Exception {
        long child = Long.parseLong(killedLauncher("after-handoff"));
        LeaseStore store = LeaseStore.open(leases());
        Acquisition a = store.acquire("build", newcomer());
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) a).record().holder().pid()).isEqualTo(child);
        assertThat(((Acquisition.Held) a).record().adoptedBy()).as("handed off, not adopted").isEmpty();
    }

    @Test
    void aChildThatExitsAtOnceEndsTheLeaseWithItsStatus() throws Exception {
        LeaseStore store = LeaseStore.open(leases());
        Spawn.Started s = (Spawn.Started) store.spawn("build", new ProcessBuilder("sh", "-c", "exit 7"));
        assertThat(s.process().waitFor()).isEqualTo(7);
        LeaseRecord r = store.read("build").orElseThrow();
        if (s.lease().state() == LeaseRecord.State.RESERVED) {
            // exited before it could be identified: ended as exited by spawn itself
            assertThat(r.state()).isEqualTo(LeaseRecord.State.RELEASED);
            assertThat(r.ended().orElseThrow().how()).isEqualTo(LeaseRecord.Ending.How.EXITED);
            assertThat(r.ended().orElseThrow().exitCode()).hasValue(7);
        } else {
            // handed off in time: the lease is the dead child's, and the next taker takes it over
            assertThat(store.acquire("build", newcomer())).isInstanceOf(Acquisition.Granted.class);
        }
    }

    @Test
    void aCommandThatCannotStartEndsTheReservationAsSpawnFailed() throws Exception {
        LeaseStore store = LeaseStore.open(leases());
        assertThatThrownBy(() -> store.spawn("build", new ProcessBuilder(tmp.resolve("no-such-program").toString())))
                .isInstanceOf(IOException.class);
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.state()).isEqualTo(LeaseRecord.State.RELEASED);
        assertThat(r.ended().orElseThrow().how()).isEqualTo(LeaseRecord.Ending.How.SPAWN_FAILED);
        assertThat(r.toJson()).contains("\"how\":\"spawn_failed\"");
        assertThat(store.acquire("build", newcomer())).isInstanceOf(Acquisition.Granted.class);
    }
}
