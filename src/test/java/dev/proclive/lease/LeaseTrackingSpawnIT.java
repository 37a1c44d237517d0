package dev.proclive.lease;

import dev.proclive.Eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.CPrograms;
import dev.proclive.LivenessChecker;
import dev.proclive.lease.core.Pause;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.Descendants;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A library {@code spawn} whose policy lets the kernel track the command's descendants, with real
 * processes and two loops of short-lived processes running beside it (a build's churn, which
 * leaves a scan of environments inconclusive pass after pass): its end is recorded with its status
 * every time, with a cgroup (as root here) and with the subreaper alone (what a normal user gets),
 * and a daemon it leaves holds the lease until it ends, then the lease ends by itself.
 */
@EnabledOnOs(OS.LINUX)
class LeaseTrackingSpawnIT {

    @TempDir
    Path tmp;
    final List<Process> started = new ArrayList<>();

    @BeforeEach
    void churn() throws Exception {
        for (int i = 0; i < 2; i++) {
            started.add(dev.proclive.BusyMachine.churnLoop());
        }
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** What a store spawns with unless told otherwise: tracked. */
    private static final LeasePolicy TRACKED = LeasePolicy.defaults();

    /**
     * The platform's tracking with no cgroup: the subreaper alone, as a normal user has it. Its
     * subreaper is the platform's, every cgroup call {@link Descendants#NONE}'s.
     */
    static final Descendants SUBREAPER_ONLY = dev.proclive.Forwarding.to(Descendants.class,
            method -> List.of("becomeSubreaper", "orphans").contains(method.getName()) ? Platform.descendants() : Descendants.NONE);

    private LeaseStore store(Descendants descendants) throws IOException {
        return LeaseStore.builder().directory(tmp.resolve("leases")).policy(TRACKED).checker(LivenessChecker.system()).clock(Clock.systemUTC()).pause(Pause.REAL).descendants(descendants).build();
    }

    /** The record once it is released (the library records the end when the child exits), within a minute. */
    private static LeaseRecord released(LeaseStore store, String name) throws Exception {
        Optional<LeaseRecord> r = Eventually.until(name + " released", Duration.ofSeconds(60), () -> store.read(name),
                now -> now.isPresent() && now.get().state() == LeaseRecord.State.RELEASED);
        assertThat(r).as("released within a minute").isPresent();
        assertThat(r.get().state()).as("%s", r.get()).isEqualTo(LeaseRecord.State.RELEASED);
        return r.get();
    }

    private void endsRecorded(LeaseStore store) throws Exception {
        for (int round = 0; round < 10; round++) {
            Acquisition s = store.spawn("build", new ProcessBuilder("sh", "-c", "exit 7"));
            assertThat(s).as("round %d", round).isInstanceOf(Acquisition.Started.class);
            Acquisition.Started started = (Acquisition.Started) s;
            assertThat(started.process().waitFor()).isEqualTo(7);
            LeaseRecord r = released(store, "build");
            assertThat(r.fence()).isEqualTo(started.lease().fence());
            assertThat(r.ended().orElseThrow().how()).as("round %d: %s", round, r).isEqualTo(LeaseChange.EXITED);
            assertThat(r.ended().orElseThrow().exitCode()).as("round %d: %s", round, r).hasValue(7);
        }
    }

    @Test
    void underChurnEveryEndIsRecordedWithItsStatus() throws Exception {
        try (LeaseStore store = store(Platform.descendants())) {
            endsRecorded(store);
        }
    }

    @Test
    void withTheSubreaperAloneEveryEndIsRecordedToo() throws Exception {
        try (LeaseStore store = store(SUBREAPER_ONLY)) {
            endsRecorded(store);
            assertThat(store.read("build").orElseThrow().cgroup()).isEmpty();
        }
    }

    @Test
    void aChildThatClaimedItsOwnReservationEndsItWhatEverOutsideItsTreeCarriesTheToken() throws Exception {
        for (Descendants descendants : List.of(Platform.descendants(), SUBREAPER_ONLY)) {
            try (LeaseStore store = store(descendants)) {
                int[] replaces = {0};
                boolean named = descendants != SUBREAPER_ONLY && dev.proclive.Cgroups.canBeMade();
                int handOff = named ? 3 : 2; // the reservation, the cgroup named in it (where one is made), the hand-off
                store.files().beforeReplace(() -> {
                    if (++replaces[0] == handOff) {
                        throw new java.io.UncheckedIOException(new IOException("EIO: the disk failed the hand-off"));
                    }
                });
                Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder("sleep", "60"));
                started.add(s.process());
                assertThat(s.handOffFailure()).isPresent();
                store.files().beforeReplace(() -> { });
                String token = s.lease().token().orElseThrow();
                dev.proclive.Identity child = dev.proclive.ProcLive.identify(s.process().pid()).orElseThrow();
                assertThat(store.claim("build", token, child)).isInstanceOf(Acquisition.Granted.class);
                // None of the child's, yet it carries the token, as the scan would count it. Started
                // from a thread that outlives the check: not the main thread, whose children the
                // subreaper reads (the kernel gives a thread's children to the main thread when that
                // thread ends, where they would look like orphans).
                ProcessBuilder carrier = new ProcessBuilder("sleep", "60");
                carrier.environment().put(dev.proclive.lease.book.LeaseNames.TOKEN_VARIABLE, token);
                java.util.concurrent.ExecutorService starter = java.util.concurrent.Executors.newSingleThreadExecutor();
                Process outside;
                try {
                    outside = starter.submit(carrier::start).get(30, TimeUnit.SECONDS);
                    started.add(outside);
                    assertThat(Files.readString(Path.of("/proc", Long.toString(outside.pid()), "environ")))
                            .contains(dev.proclive.lease.book.LeaseNames.TOKEN_VARIABLE + "=" + token);

                    s.process().destroyForcibly();
                    assertThat(s.process().waitFor(10, TimeUnit.SECONDS)).isTrue();
                    LeaseRecord r = released(store, "build");
                    assertThat(r.holder().pid()).as("the child's own claim, ended with it: %s", r).isEqualTo(child.pid());
                    assertThat(r.ended().orElseThrow().how()).isEqualTo(LeaseChange.EXITED);
                    assertThat(r.ended().orElseThrow().exitCode()).hasValue(137);
                } finally {
                    starter.shutdown();
                }
                outside.destroyForcibly();
            }
        }
    }


    /**
     * In a cgroup the command starts as a shell that moves itself in, then becomes the command: the record names the
     * holder as the command is named (its file name, cut to the kernel's 15 bytes), not as the shell it was a moment.
     */
    @Test
    void inACgroupTheHolderIsNamedAsItsCommand() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here");
        Path longName = Files.createSymbolicLink(tmp.resolve("sleeps-for-the-build"), Path.of(which("sleep")));
        try (LeaseStore store = store(Platform.descendants())) {
            for (int round = 0; round < 3; round++) {
                for (String program : List.of("sleep", longName.toString())) {
                    String name = "named" + round + (program.equals("sleep") ? "" : "-long");
                    Acquisition.Started s = (Acquisition.Started) store.spawn(name, new ProcessBuilder(program, "60"));
                    started.add(s.process());
                    LeaseRecord r = store.read(name).orElseThrow();
                    assertThat(r.cgroup()).as("round %d: made a cgroup", round).isPresent();
                    assertThat(r.holder().name()).as("round %d: %s", round, r)
                            .isEqualTo(program.equals("sleep") ? "sleep" : "sleeps-for-the-");
                    s.process().destroyForcibly();
                    released(store, name);
                }
            }
        }
    }

    private static String which(String program) {
        return java.util.stream.Stream.of(System.getenv("PATH").split(":")).map(d -> Path.of(d, program))
                .filter(Files::isExecutable).findFirst().orElseThrow().toString();
    }

    /**
     * Two commands of one JVM, each leaving a process: the first command's lease goes to its own, not
     * to the second's orphan, which this subreaper adopted too and which neither the first's cgroup
     * nor its token shows (it carries the second's token).
     */
    @Test
    void whatAnotherCommandLeftNeverGetsTheLease() throws Exception {
        for (Descendants descendants : List.of(Platform.descendants(), SUBREAPER_ONLY)) {
            Path ownPid = tmp.resolve("own.pid");
            Path otherPid = tmp.resolve("other.pid");
            Path go = tmp.resolve("go");
            Files.deleteIfExists(ownPid);
            Files.deleteIfExists(otherPid);
            Files.deleteIfExists(go);
            String firstName = "first" + (descendants == SUBREAPER_ONLY ? "-subreaper" : "");
            String secondName = "second" + (descendants == SUBREAPER_ONLY ? "-subreaper" : "");
            try (LeaseStore store = store(descendants)) {
                // the first leaves a sleeper and waits until the second's orphan exists, so that it started after it
                Acquisition a = store.spawn(firstName, new ProcessBuilder("sh", "-c",
                        "sleep 60 & echo $! > \"$0\"; while [ ! -e \"$1\" ]; do sleep 0.05; done", ownPid.toString(),
                        go.toString()));
                assertThat(a).as("%s", a).isInstanceOf(Acquisition.Started.class);
                Acquisition.Started first = (Acquisition.Started) a;
                started.add(first.process());
                long own = Long.parseLong(Eventually.until(ownPid + " written", Duration.ofSeconds(30),
                        () -> Files.exists(ownPid) ? Files.readString(ownPid).strip() : "", t -> !t.isEmpty()));
                Acquisition.Started second = (Acquisition.Started) store.spawn(secondName, new ProcessBuilder("sh", "-c",
                        "sleep 60 & echo $! > \"$0\"", otherPid.toString()));
                started.add(second.process());
                assertThat(second.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
                long other = Long.parseLong(Eventually.until(otherPid + " written", Duration.ofSeconds(30),
                        () -> Files.exists(otherPid) ? Files.readString(otherPid).strip() : "", t -> !t.isEmpty()));
                try {
                    Files.writeString(go, "");
                    assertThat(first.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
                    LeaseRecord r = Eventually.until(firstName + " adopted", Duration.ofSeconds(30),
                            () -> store.read(firstName).orElseThrow(), now -> now.holder().pid() != first.process().pid());
                    assertThat(r.holder().pid()).as("its own leftover holds it, not the other's: %s", r).isEqualTo(own);
                    assertThat(store.read(secondName).orElseThrow().holder().pid()).isEqualTo(other);
                } finally {
                    ProcessHandle.of(own).ifPresent(ProcessHandle::destroyForcibly);
                    ProcessHandle.of(other).ifPresent(ProcessHandle::destroyForcibly);
                }
                for (String name : List.of(firstName, secondName)) { // their ends recorded, their cgroups gone
                    LeaseRecord ended = released(store, name);
                    ended.cgroup().ifPresent(c -> assertThat(Path.of(c)).as("%s", ended).doesNotExist());
                }
            }
        }
    }

    /**
     * With the subreaper alone, of two processes a command leaves, the one whose token was blanked
     * ({@code PROCLIVE_LEASE_TOKEN=}) holds the lease: no scan will find it, while the other carries
     * the token. A blank token is no other command's.
     */
    @Test
    void ofWhatACommandLeavesTheOneWithABlankedTokenHoldsIt() throws Exception {
        Path blankPid = tmp.resolve("blank.pid");
        try (LeaseStore store = store(SUBREAPER_ONLY)) {
            Acquisition a = store.spawn("blanked", new ProcessBuilder("sh", "-c",
                    // told once its environment shows the token blanked (exec'd): before, it reads as its parent's
                    "sleep 60 & PROCLIVE_LEASE_TOKEN= sleep 60 & b=$!; until tr '\\0' '\\n' < /proc/$b/environ"
                            + " | grep -qx 'PROCLIVE_LEASE_TOKEN='; do sleep 0.02; done; echo $b > \"$0\"",
                    blankPid.toString()));
            assertThat(a).as("%s", a).isInstanceOf(Acquisition.Started.class);
            Acquisition.Started s = (Acquisition.Started) a;
            started.add(s.process());
            assertThat(s.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            long blanked = Long.parseLong(Eventually.until(blankPid + " written", Duration.ofSeconds(30),
                    () -> Files.exists(blankPid) ? Files.readString(blankPid).strip() : "", t -> !t.isEmpty()));
            try {
                LeaseRecord r = Eventually.until("adopted", Duration.ofSeconds(30), () -> store.read("blanked").orElseThrow(),
                        now -> now.holder().pid() != s.process().pid());
                assertThat(r.holder().pid()).as("the one no scan finds holds it: %s", r).isEqualTo(blanked);
            } finally {
                ProcessHandle.of(blanked).ifPresent(ProcessHandle::destroyForcibly);
                ProcessHandle.current().children().filter(p -> p.info().command().orElse("").endsWith("sleep"))
                        .forEach(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void aDaemonThatBlanksItsEnvironmentHoldsTheLeaseAndItsEndEndsIt() throws Exception {
        for (Descendants descendants : List.of(Platform.descendants(), SUBREAPER_ONLY)) {
            Path blankd = Files.exists(tmp.resolve("blankd")) ? tmp.resolve("blankd") : CPrograms.compile(tmp, "blankd");
            Path pidFile = tmp.resolve("daemon.pid");
            Files.deleteIfExists(pidFile);
            try (LeaseStore store = store(descendants)) {
                Acquisition.Started s = (Acquisition.Started) store.spawn("build",
                        new ProcessBuilder(blankd.toString(), "3", pidFile.toString()));
                assertThat(s.process().waitFor()).isZero();
                // the daemon writes it after its double fork, however busy the machine
                Eventually.until(pidFile + " written", Duration.ofSeconds(30), () -> Files.exists(pidFile));
                long daemon = Long.parseLong(Files.readString(pidFile).strip());
                LeaseRecord r = Eventually.until("held by the daemon", Duration.ofSeconds(30),
                        () -> store.read("build").orElseThrow(), now -> now.holder().pid() == daemon);
                assertThat(r.state()).as("%s", r).isEqualTo(LeaseRecord.State.HELD);
                assertThat(r.holder().pid()).as("the daemon holds it: %s", r).isEqualTo(daemon);
                assertThat(r.fence()).isEqualTo(s.lease().fence());
                Acquisition newcomer = store.acquire("build", dev.proclive.ProcLive.identify(
                        started.get(0).pid()).orElseThrow());
                assertThat(newcomer).as("no second writer while the daemon runs").isInstanceOf(Acquisition.Held.class);
                LeaseRecord ended = released(store, "build");
                assertThat(ended.fence()).isEqualTo(s.lease().fence());
                assertThat(ended.ended().orElseThrow().how()).isEqualTo(LeaseChange.EXITED);
                assertThat(ProcessHandle.of(daemon).map(ProcessHandle::isAlive).orElse(false)).isFalse();
            }
        }
    }

    @Test
    void spawnsAtOnceFromTwoThreadsEachGetTheirCgroupAndTheJvmStaysInItsOwn() throws Exception {
        String before = Files.readString(Path.of("/proc/self/cgroup"));
        try (LeaseStore store = store(Platform.descendants())) {
            java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
            try {
                List<java.util.concurrent.Future<Acquisition>> spawned = new ArrayList<>();
                for (int round = 0; round < 20; round++) {
                    String name = "lease" + round;
                    spawned.add(two.submit(() -> store.spawn(name, new ProcessBuilder("sh", "-c", "exit 3"))));
                }
                for (int round = 0; round < 20; round++) {
                    Acquisition.Started s = (Acquisition.Started) spawned.get(round).get(60, TimeUnit.SECONDS);
                    assertThat(s.process().waitFor()).isEqualTo(3);
                    LeaseRecord r = released(store, "lease" + round);
                    assertThat(r.ended().orElseThrow().exitCode()).as("%s", r).hasValue(3);
                }
            } finally {
                two.shutdownNow();
            }
        }
        assertThat(Files.readString(Path.of("/proc/self/cgroup"))).as("this JVM is back where it was").isEqualTo(before);
    }
}
