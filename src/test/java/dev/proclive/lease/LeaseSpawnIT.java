package dev.proclive.lease;

import dev.proclive.lease.book.Records;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.Eventually;
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
import java.time.Duration;
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
    /** The stores a test opened: closed before the directory is deleted, so none writes its session file into the deletion. */
    final List<LeaseStore> stores = new ArrayList<>();

    private LeaseStore open() throws java.io.IOException {
        LeaseStore store = LeaseStore.open(leases());
        stores.add(store);
        return store;
    }

    /** A store on {@link #leases()} whose spawns the kernel tracks ({@link #TRACKED}), closed after the test. */
    private LeaseStore tracked() throws java.io.IOException {
        LeaseStore store = LeaseStore.builder().directory(leases()).policy(TRACKED).build();
        stores.add(store);
        return store;
    }

    @AfterEach
    void stop() throws Exception {
        stores.forEach(LeaseStore::close);
        List<Path> closedWith = files();
        for (Process p : workers) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        orphans.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        children.killAll();
        // named here, not left to JUnit's "failed to delete" as it removes the directory
        assertThat(files()).as("files that appeared after every store closed").isSubsetOf(closedWith);
    }

    /** Every path under the test's directory now. */
    private List<Path> files() throws IOException {
        try (java.util.stream.Stream<Path> all = Files.walk(tmp)) {
            return all.toList();
        }
    }

    /**
     * Freeing a reservation needs a complete scan: as a normal user, another user's process started
     * since the reservation (a cron job, another login) cannot be read, and the lease is rightly
     * Undecided. Root reads every process, so there (and in CI) the assertion after this always runs.
     */
    private static void assumeCompleteScan(Acquisition a) {
        org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name"))
                        || !(a instanceof Acquisition.Undecided),
                "another user's process made the scan incomplete, as it must for a normal user: " + a);
        if (a instanceof Acquisition.Undecided u) {
            dev.proclive.BusyMachine.assumeScanNotOutrun(u.why());
        }
    }

    /**
     * A spawn whose end the kernel tracks: without it, the end of a child that may have forked is
     * proven only by the token scan, which processes of the same user ending under every pass (a
     * build beside it) rightly leave undecided.
     */
    private static final LeasePolicy TRACKED = LeasePolicy.builder().trackDescendants(true).build();

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

    /**
     * A live process asking for the lease, alive until the test ends it ({@code children}, after each
     * test): however long a busy machine makes the test, it never asks as a dead process.
     */
    private Identity newcomer() throws IOException {
        return ProcLive.identify(children.start("sleep", "infinity").pid()).orElseThrow();
    }

    @Test
    void spawnStartsTheChildUnderTheLeaseWithItsReservationInItsEnvironment() throws Exception {
        LeaseStore store = tracked(); // an end the kernel can prove, also on a busy box
        Acquisition s = store.spawn("build", new ProcessBuilder("sleep", "60"));
        assertThat(s).isInstanceOf(Acquisition.Started.class);
        Acquisition.Started started = (Acquisition.Started) s;
        orphans.add(started.process().pid());
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(r.holder().pid()).isEqualTo(started.process().pid());
        assertThat(r.fence()).isEqualTo(1).isEqualTo(started.lease().fence());
        String environ = Files.readString(Path.of("/proc/" + started.process().pid() + "/environ"), StandardCharsets.ISO_8859_1);
        assertThat(environ.split("\0")).contains("PROCLIVE_LEASE_TOKEN=" + started.lease().token().orElseThrow(),
                "PROCLIVE_LEASE_NAME=build", "PROCLIVE_LEASE_DIR=" + store.directory().orElseThrow(), "PROCLIVE_LEASE_FENCE=1");
        assertThat(Records.hasToken(r, started.lease().token().orElseThrow())).isTrue();
        assertThat(started.handOffFailure()).isEmpty();
        Acquisition second = store.spawn("build", new ProcessBuilder("sleep", "60"));
        assertThat(second).as("a second writer is not started").isInstanceOf(Acquisition.Held.class);
        started.process().destroyForcibly();
        assertThat(started.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ended(store).ended().orElseThrow().how()).isEqualTo(LeaseChange.EXITED);
    }

    @Test
    void aLauncherKilledBeforeItStartedAnythingLeavesAReservationThatIsFreed() throws Exception {
        assertThat(killedLauncher("before-start")).isEqualTo("reserved");
        LeaseStore store = open();
        assertThat(store.read("build").orElseThrow().state()).isEqualTo(LeaseRecord.State.RESERVED);
        Acquisition a = store.acquire("build", newcomer());
        assumeCompleteScan(a);
        assertThat(a).as("a complete scan found no carrier and the reserver is dead").isInstanceOf(Acquisition.Granted.class);
        LeaseRecord r = ((Acquisition.Granted) a).lease().record();
        assertThat(r.fence()).isEqualTo(2);
        assertThat(r.previous().orElseThrow().verdict().liveness()).isEqualTo(Liveness.DEAD);
    }

    /**
     * A carrier that re-forks forever (each generation forks the next and exits) while its
     * reserver is dead: a scan that reads /proc entry by entry finds the pid it listed gone and
     * the carrier under a pid it never listed. The lease must never be granted while it runs;
     * once the chain is killed, it is freed.
     */
    @Test
    void aCarrierThatKeepsReForkingIsNeverMissed() throws Exception {
        Path refork = dev.proclive.CPrograms.compile(tmp, "refork");
        LeaseStore store = open();
        Process reserverProcess = children.start("sleep", "60");
        Identity reserver = ProcLive.identify(reserverProcess.pid()).orElseThrow();
        Lease reserved = ((Acquisition.Granted) store.reserve("build", reserver)).lease();
        ProcessBuilder chain = new ProcessBuilder(refork.toString()).redirectError(ProcessBuilder.Redirect.INHERIT);
        chain.environment().put(LeaseStore.TOKEN_VARIABLE, reserved.token().orElseThrow());
        Process first = chain.start();
        long group = Long.parseLong(new BufferedReader(new InputStreamReader(first.getInputStream(),
                StandardCharsets.US_ASCII)).readLine().strip());
        Identity newcomer = newcomer();
        try {
            reserverProcess.destroyForcibly();
            assertThat(reserverProcess.waitFor(10, TimeUnit.SECONDS)).isTrue();
            for (int i = 0; i < 30; i++) {
                Acquisition a = store.acquire("build", newcomer);
                assertThat(a).as("try %d while the carrier re-forks: %s", i, a).isNotInstanceOf(Acquisition.Granted.class);
            }
            assertThat(store.read("build").orElseThrow().fence()).isEqualTo(1);
        } finally {
            new ProcessBuilder("kill", "-KILL", "--", "-" + group).inheritIO().start().waitFor();
        }
        assertGrantedOnceNothingCarriesTheToken(store, newcomer);
    }

    @Test
    void aChildThatDaemonisesDoesNotEndItsLeaseWhileItsTokenLivesOn() throws Exception {
        Path refork = dev.proclive.CPrograms.compile(tmp, "refork");
        LeaseStore store = open();
        Acquisition.Started s = (Acquisition.Started) store.spawn("build",
                new ProcessBuilder(refork.toString()).redirectError(ProcessBuilder.Redirect.INHERIT));
        long group = Long.parseLong(new BufferedReader(new InputStreamReader(s.process().getInputStream(),
                StandardCharsets.US_ASCII)).readLine().strip());
        Identity newcomer = newcomer();
        try {
            // its first generation forks the next and exits at once, as a daemon does: the command "ended"
            assertThat(s.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
            for (int i = 0; i < 20; i++) {
                Acquisition a = store.acquire("build", newcomer);
                assertThat(a).as("try %d while what it forked carries the token: %s", i, a)
                        .isNotInstanceOf(Acquisition.Granted.class);
            }
            assertThat(store.read("build").orElseThrow().ended()).as("its end is not recorded as the lease's").isEmpty();
        } finally {
            new ProcessBuilder("kill", "-KILL", "--", "-" + group).inheritIO().start().waitFor();
        }
        assertGrantedOnceNothingCarriesTheToken(store, newcomer);
    }

    @Test
    void aLauncherKilledBetweenStartAndHandOffLeavesTheLeaseToItsChild() throws Exception {
        long child = Long.parseLong(killedLauncher("before-handoff"));
        LeaseStore store = open();
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
        LeaseStore store = open();
        assertThat(store.acquire("build", newcomer())).isInstanceOf(Acquisition.Held.class);
        assertThat(store.read("build").orElseThrow().holder().pid()).isEqualTo(grandchild);
    }

    @Test
    void aLauncherKilledAfterTheHandOffChangesNothing() throws Exception {
        long child = Long.parseLong(killedLauncher("after-handoff"));
        LeaseStore store = open();
        Identity newcomer = newcomer();
        Acquisition a = store.acquire("build", newcomer);
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) a).record().holder().pid()).isEqualTo(child);
        assertThat(((Acquisition.Held) a).record().adoptedBy()).as("handed off, not adopted").isEmpty();
        // its command ends with no launcher left to see it: the next judge finds the named cgroup empty and removes it
        LeaseRecord held = ((Acquisition.Held) a).record();
        ProcessHandle.of(child).filter(p -> ProcLive.identify(p.pid())
                .map(now -> Records.sameProcess(now, held.holder())).orElse(false)).ifPresent(ProcessHandle::destroyForcibly);
        if (held.cgroup().isPresent()) {
            Path cgroup = Path.of(held.cgroup().get());
            Eventually.until("the empty cgroup removed by a judge", Duration.ofSeconds(30), () -> {
                store.acquire("build", newcomer); // a scan under churn may stay undecided: the cgroup is judged first
                return !Files.exists(cgroup);
            });
            assertGrantedOnceNothingCarriesTheToken(store, newcomer);
        }
    }

    @Test
    void twoThreadsOfOneProcessSpawningOneNameStartOneChild() throws Exception {
        LeaseStore store = tracked(); // an end the kernel can prove, also on a busy box
        java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
        java.util.concurrent.Callable<Acquisition> spawn = () -> {
            together.await();
            return store.spawn("build", new ProcessBuilder("sleep", "60"));
        };
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            List<java.util.concurrent.Future<Acquisition>> results = two.invokeAll(List.of(spawn, spawn));
            List<Acquisition> spawns = new ArrayList<>();
            for (java.util.concurrent.Future<Acquisition> f : results) {
                spawns.add(f.get(60, TimeUnit.SECONDS));
            }
            spawns.stream().filter(Acquisition.Started.class::isInstance)
                    .forEach(s -> orphans.add(((Acquisition.Started) s).process().pid()));
            assertThat(spawns).filteredOn(Acquisition.Started.class::isInstance).as("one child, one token").hasSize(1);
            assertThat(spawns).filteredOn(s -> !(s instanceof Acquisition.Started)).singleElement()
                    .isInstanceOf(Acquisition.Held.class);
            Process child = spawns.stream().filter(Acquisition.Started.class::isInstance).map(x -> ((Acquisition.Started) x).process())
                    .findFirst().orElseThrow();
            child.destroyForcibly();
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(ended(store).ended().orElseThrow().how()).isEqualTo(LeaseChange.EXITED);
        } finally {
            two.shutdownNow();
        }
    }

    @Test
    void aFailedHandOffStillReturnsTheRunningChildWithItsReservation() throws Exception {
        LeaseStore store = tracked(); // an end the kernel can prove, also on a busy box
        int[] replaces = {0};
        int handOff = dev.proclive.Cgroups.canBeMade() ? 3 : 2; // the reservation, its cgroup named (where one is made), the hand-off
        store.files().beforeReplace(() -> {
            if (++replaces[0] == handOff) {
                throw new java.io.UncheckedIOException(new IOException("EIO: the disk failed the hand-off"));
            }
        });
        Acquisition s = store.spawn("build", new ProcessBuilder("sleep", "60"));
        assertThat(s).as("a child that runs is never lost").isInstanceOf(Acquisition.Started.class);
        Acquisition.Started started = (Acquisition.Started) s;
        orphans.add(started.process().pid());
        assertThat(started.process().isAlive()).isTrue();
        assertThat(started.handOffFailure()).hasValueSatisfying(e -> assertThat(e).hasMessageContaining("EIO"));
        assertThat(started.lease().state()).isEqualTo(LeaseRecord.State.RESERVED);
        store.files().beforeReplace(() -> { });
        // the child carries the token: it claims its lease, fence kept
        Identity child = ProcLive.identify(started.process().pid()).orElseThrow();
        Acquisition claimed = store.claim("build", started.lease().token().orElseThrow(), child);
        assertThat(claimed).isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) claimed).lease().fence()).isEqualTo(1);
        started.process().destroyForcibly();
        assertThat(started.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
        LeaseRecord r = ended(store);
        assertThat(r.ended()).as("the claimed lease ends with the child, recorded by the library").isPresent();
        assertThat(r.ended().get().how()).isEqualTo(LeaseChange.EXITED);
        assertThat(r.ended().get().exitCode()).hasValue(137);
        assertThat(r.holder().pid()).isEqualTo(started.process().pid());
    }

    /**
     * {@code lease run} interrupts its thread when a signal comes before the command runs (to end a
     * wait); interrupts that come while the child is identified and handed the lease must not fail
     * the hand-off (an interrupted file channel closes): the child holds its lease. Ten spawns, each
     * interrupted without pause from the moment its child runs {@code sleep} until it returns.
     */
    @Test
    void interruptsWhileTheChildIsHandedTheLeaseDoNotFailTheHandOff() throws Exception {
        LeaseStore store = tracked(); // an end the kernel can prove, also on a busy box
        Thread caller = Thread.currentThread();
        for (int i = 0; i < 10; i++) {
            java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();
            Thread interrupter = new Thread(() -> {
                while (!returned.get() && ProcessHandle.current().children().noneMatch(LeaseSpawnIT::sleeps)) {
                    Thread.onSpinWait();
                }
                while (!returned.get()) {
                    caller.interrupt(); // as signals to lease run do, until the command is known to run
                    Thread.onSpinWait();
                }
            });
            interrupter.start();
            Acquisition.Started started;
            try {
                started = (Acquisition.Started) store.spawn("build" + i, new ProcessBuilder("sleep", "60"));
            } finally {
                returned.set(true);
                while (interrupter.isAlive()) {
                    try {
                        interrupter.join();
                    } catch (InterruptedException lastOne) {
                        // the interrupter's last, sent before it saw the spawn return
                    }
                }
                Thread.interrupted();
            }
            orphans.add(started.process().pid());
            assertThat(started.handOffFailure()).as("spawn %d", i).isEmpty();
            LeaseRecord r = store.read("build" + i).orElseThrow();
            assertThat(r.state()).as("spawn %d", i).isEqualTo(LeaseRecord.State.HELD);
            assertThat(r.holder().pid()).isEqualTo(started.process().pid()).isEqualTo(started.lease().holder().pid());
            started.process().destroyForcibly();
            assertThat(started.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(ended(store, "build" + i).ended().orElseThrow().exitCode()).as("spawn %d", i).hasValue(137);
        }
    }

    /** Whether {@code p} runs {@code sleep} (it has been exec'd): the spawned child, not a process the store starts to learn the time. */
    private static boolean sleeps(ProcessHandle p) {
        return p.info().command().map(c -> c.endsWith("/sleep")).orElse(false);
    }

    /** Waits (20 s at most) for {@code newcomer} to be granted the lease, fence 2, once its carriers are gone. */
    private static void assertGrantedOnceNothingCarriesTheToken(LeaseStore store, Identity newcomer) throws Exception {
        Acquisition[] last = {null};
        try {
            Eventually.until("granted", Duration.ofSeconds(20), () -> last[0] = store.acquire("build", newcomer),
                    a -> a instanceof Acquisition.Granted);
        } catch (AssertionError notYet) {
            // said below: a scan that stayed incomplete skips, anything else fails
        }
        Acquisition after = last[0];
        assumeCompleteScan(after);
        assertThat(after).as("freed once nothing carries the token").isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) after).lease().fence()).isEqualTo(2);
    }

    /** The record once its grant has ended, waited for: the library ends a spawned child's lease as it exits. */
    private static LeaseRecord ended(LeaseStore store) throws Exception {
        return ended(store, "build");
    }

    /** The record of lease {@code name} once its grant has ended, waited for. */
    private static LeaseRecord ended(LeaseStore store, String name) throws Exception {
        try {
            return Eventually.until("ended", Duration.ofSeconds(10), () -> store.read(name).orElseThrow(),
                    r -> r.ended().isPresent());
        } catch (AssertionError notEnded) {
            return store.read(name).orElseThrow(); // the caller says what it expected of it
        }
    }

    @Test
    void aChildThatExitsAtOnceEndsTheLeaseWithItsStatus() throws Exception {
        LeaseStore store = tracked(); // an end the kernel can prove, also on a busy box
        Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder("sh", "-c", "exit 7"));
        assertThat(s.process().waitFor()).isEqualTo(7);
        // whether it exited before the hand-off or after, the record says so, with the status, once waitFor returns
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.state()).isEqualTo(LeaseRecord.State.RELEASED);
        assertThat(r.ended().orElseThrow().how()).isEqualTo(LeaseChange.EXITED);
        assertThat(r.ended().orElseThrow().exitCode()).hasValue(7);
    }

    @Test
    void theLibraryEndsASpawnedChildsLeaseWhenItExitsWithoutTheCallerAsking() throws Exception {
        LeaseStore store = tracked(); // an end the kernel can prove, also on a busy box
        Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder("sleep", "60"));
        assertThat(store.read("build").orElseThrow().state()).isEqualTo(LeaseRecord.State.HELD);
        s.process().destroyForcibly(); // SIGKILL
        assertThat(s.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(s.process().onExit().isDone()).isTrue();
        LeaseRecord r = store.read("build").orElseThrow(); // written before waitFor returned
        assertThat(r.ended()).as("ended by the library, not by this test").isPresent();
        assertThat(r.ended().get().how()).isEqualTo(LeaseChange.EXITED);
        assertThat(r.ended().get().exitCode()).hasValue(137); // 128 + SIGKILL, as the JDK reports it
        assertThat(s.lease().exited(137)).as("a caller that waits itself may still say so").isTrue();
    }

    @Test
    void aCommandThatCannotStartEndsTheReservationAsSpawnFailed() throws Exception {
        LeaseStore store = open();
        assertThatThrownBy(() -> store.spawn("build", new ProcessBuilder(tmp.resolve("no-such-program").toString())))
                .isInstanceOf(IOException.class);
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.state()).isEqualTo(LeaseRecord.State.RELEASED);
        assertThat(r.ended().orElseThrow().how()).isEqualTo(LeaseChange.SPAWN_FAILED);
        assertThat(LeaseJson.write(r)).contains("\"how\":\"spawn_failed\"");
        assertThat(store.acquire("build", newcomer())).isInstanceOf(Acquisition.Granted.class);
    }
}
