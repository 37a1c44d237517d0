package dev.proclive.lease;

import dev.proclive.Eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.CPrograms;
import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.lease.core.Pause;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.Descendants;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every proof, not the first: a library {@code spawn} whose command leaves a daemon behind in a way
 * that slips past one of the kernel's proofs — it moves itself out of the command's cgroup, or its
 * main thread exits while another writes on, or the child cannot enter its cgroup at all — never
 * lets a newcomer in while anything of the command runs; and no cgroup is left behind. Two loops
 * of short-lived processes run beside every test, as a build would.
 */
@EnabledOnOs(OS.LINUX)
class EveryProofIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

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

    /** Asserts that the cgroup a record named is removed, within 30 s (its supervisor removes it as its command ends). */
    static void removed(Optional<String> named) throws Exception {
        if (named.isEmpty()) {
            return;
        }
        Path dir = Path.of(named.get());
        Eventually.until("no cgroup left behind: " + dir, Duration.ofSeconds(30), () -> !Files.exists(dir));
    }

    private LeaseStore store(Descendants descendants) throws IOException {
        return LeaseStore.builder().directory(tmp.resolve("leases")).policy(LeasePolicy.defaults()).checker(LivenessChecker.system()).clock(Clock.systemUTC()).pause(Pause.REAL).descendants(descendants).build();
    }

    /** The record once {@code done} says so, within a minute (a busy machine); fails with the record otherwise. */
    private static LeaseRecord until(LeaseStore store, String name, Predicate<LeaseRecord> done) throws Exception {
        return Eventually.until("the record of " + name, Duration.ofSeconds(60), () -> store.read(name),
                r -> r.isPresent() && done.test(r.get())).orElseThrow();
    }

    private static long pidIn(Path pidFile) throws Exception {
        // written after the fork (and the move), however busy the machine
        Eventually.until(pidFile + " written", Duration.ofSeconds(30), () -> Files.exists(pidFile));
        return Long.parseLong(Files.readString(pidFile).strip());
    }


    /**
     * The daemon holds the lease while it writes, and a newcomer is held off until its last write;
     * then the lease ends by itself and the newcomer is granted.
     */
    private Optional<String> daemonHoldsUntilItEnds(LeaseStore store, List<String> daemonArgs) throws Exception {
        Path lingerd = Files.exists(tmp.resolve("lingerd")) ? tmp.resolve("lingerd") : CPrograms.compile(tmp, "lingerd");
        Path pidFile = tmp.resolve("daemon" + System.nanoTime() + ".pid");
        List<String> command = new ArrayList<>(List.of(lingerd.toString(), "3", pidFile.toString()));
        command.addAll(daemonArgs);
        Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder(command));
        assertThat(s.process().waitFor()).isZero();
        long daemon = pidIn(pidFile);
        LeaseRecord held = until(store, "build", r -> r.holder().pid() == daemon || !r.granted());
        assertThat(held.state()).as("the daemon holds it: %s", held).isEqualTo(LeaseRecord.State.HELD);
        assertThat(held.fence()).isEqualTo(s.lease().fence());
        Identity newcomer = children.sleeping();
        assertThat(store.acquire("build", newcomer)).as("no second writer while the daemon runs")
                .isInstanceOf(Acquisition.Held.class);
        LeaseRecord ended = until(store, "build", r -> !r.granted());
        assertThat(ended.ended().orElseThrow().how()).as("%s", ended).isEqualTo(LeaseChange.EXITED);
        Instant grantedAt = Instant.now();
        assertThat(store.acquire("build", newcomer)).isInstanceOf(Acquisition.Granted.class);
        List<String> writes = Files.readAllLines(Path.of(pidFile + ".log"));
        assertThat(writes).isNotEmpty();
        assertThat(Long.parseLong(writes.get(writes.size() - 1))).as("its last write came before the next grant")
                .isLessThanOrEqualTo(grantedAt.toEpochMilli());
        assertThat(ProcessHandle.of(daemon).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        return held.cgroup();
    }

    @Test
    void aDaemonThatLeavesItsCgroupHoldsTheLeaseUntilItEnds() throws Exception {
        Optional<Path> own = dev.proclive.Cgroups.own();
        assumeTrue(own.isPresent() && Files.isWritable(own.get().resolve("cgroup.procs")),
                "no writable cgroup v2 hierarchy here (root, or a delegated subtree): no cgroup to leave");
        try (LeaseStore store = store(Platform.descendants())) {
            Optional<String> cgroup = daemonHoldsUntilItEnds(store,
                    List.of("--leave", own.get().resolve("cgroup.procs").toString()));
            assertThat(cgroup).as("made: the cgroup is the proof this daemon slips past").isPresent();
            assertThat(store.read("build").orElseThrow().cgroup()).isEmpty(); // the newcomer's grant names none
            removed(cgroup);
        }
    }

    @Test
    void aDaemonWhoseMainThreadExitedHoldsTheLeaseUntilItEnds() throws Exception {
        for (Descendants descendants : List.of(Platform.descendants(), LeaseTrackingSpawnIT.SUBREAPER_ONLY)) {
            try (LeaseStore store = store(descendants)) {
                removed(daemonHoldsUntilItEnds(store, List.of("--leader-exits")));
                store.read("build").ifPresent(r -> {
                    try {
                        store.release("build", r.fence());
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
            }
        }
    }

    /** The platform's tracking, with a child that cannot move into its cgroup (as when the write fails). */
    private static final Descendants CANNOT_ENTER = new Delegating(Platform.descendants()) {
        @Override
        public List<String> enter(String cgroup, List<String> command) {
            return super.enter(cgroup + "/not-a-cgroup/proclive.build.000000000000", command);
        }
    };

    @Test
    void aChildThatCannotEnterItsCgroupRunsNothingAndTheLeaseEndsAtOnce() throws Exception {
        assumeTrue(dev.proclive.Cgroups.own().map(own -> Files.isWritable(own.resolve("cgroup.procs"))).orElse(false),
                "no writable cgroup v2 hierarchy here (root, or a delegated subtree)");
        Path marker = tmp.resolve("ran");
        try (LeaseStore store = store(CANNOT_ENTER)) {
            Acquisition.Started s = (Acquisition.Started) store.spawn("build",
                    new ProcessBuilder("sh", "-c", "touch '" + marker + "'; sleep 30"));
            assertThat(s.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(s.process().exitValue()).isEqualTo(Descendants.CANNOT_ENTER);
            assertThat(marker).as("nothing of the command ran").doesNotExist();
            LeaseRecord ended = until(store, "build", r -> !r.granted());
            assertThat(ended.ended().orElseThrow().exitCode()).hasValue(Descendants.CANNOT_ENTER);
            assertThat(ended.cgroup()).isPresent();
            assertThat(store.acquire("build", children.sleeping())).isInstanceOf(Acquisition.Granted.class);
            removed(ended.cgroup());
        }
    }

    @Test
    void aCgroupThatCannotBeNamedInTheRecordIsNotUsedAndNotLeftBehind() throws Exception {
        assumeTrue(dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here (root, or a delegated subtree)");
        try (LeaseStore store = store(Platform.descendants())) {
            int[] replaces = {0};
            store.files().beforeReplace(() -> {
                if (++replaces[0] == 2) { // the first writes the reservation, the second names its cgroup
                    throw new java.io.UncheckedIOException(new IOException("EIO: the disk failed the naming"));
                }
            });
            Acquisition.Started s = (Acquisition.Started) store.spawn("unnamed", new ProcessBuilder("sh", "-c", "exit 4"));
            assertThat(s.handOffFailure()).isEmpty();
            assertThat(s.process().waitFor()).isEqualTo(4);
            LeaseRecord ended = until(store, "unnamed", r -> !r.granted());
            assertThat(ended.cgroup()).as("never named, so never used").isEmpty();
            assertThat(ended.ended().orElseThrow().exitCode()).as("the subreaper still proves the end").hasValue(4);
            assertThat(dev.proclive.Cgroups.own().orElseThrow().toFile().list((d, n) -> n.startsWith("proclive.unnamed.")))
                    .as("the cgroup made for it is removed at once").isEmpty();
        }
    }

    @Test
    void aProgramThatIsNotThereFailsTheSpawnAsProcessBuilderDoes() throws Exception {
        try (LeaseStore store = store(Platform.descendants())) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.spawn("build",
                            new ProcessBuilder("no-such-program-" + System.nanoTime())))
                    .isInstanceOf(IOException.class).hasMessageContaining("Cannot run program");
            LeaseRecord r = store.read("build").orElseThrow();
            assertThat(r.ended().orElseThrow().how()).isEqualTo(LeaseChange.SPAWN_FAILED);
            removed(r.cgroup());
        }
    }

    /** Tracking whose removal of a cgroup fails, as an rmdir that an injected fault refuses. */
    private static final Descendants CANNOT_REMOVE = new Delegating(Platform.descendants()) {
        @Override
        public void remove(String cgroup) {
        }
    };

    @Test
    void aCgroupWhoseRemovalFailedIsRemovedByWhoeverFindsItEmpty() throws Exception {
        try (LeaseStore failing = store(CANNOT_REMOVE)) {
            Acquisition.Started s = (Acquisition.Started) failing.spawn("build", new ProcessBuilder("true"));
            assertThat(s.process().waitFor()).isZero();
            LeaseRecord ended = until(failing, "build", r -> !r.granted());
            assumeTrue(ended.cgroup().isPresent(), "no cgroup can be made here (the cgroup v2 hierarchy is not writable)");
            assertThat(Path.of(ended.cgroup().get())).as("still named: %s", ended).isDirectory();
        }
        try (LeaseStore next = store(Platform.descendants())) {
            LeaseRecord before = next.read("build").orElseThrow();
            assertThat(next.acquire("build", children.sleeping())).isInstanceOf(Acquisition.Granted.class);
            assertThat(Path.of(before.cgroup().orElseThrow())).as("the grant after it removed it").doesNotExist();
        }
    }

    @Test
    void aCgroupOfALeaseBrokenWhileItsCommandRanIsRemovedWhenTheCommandEnds() throws Exception {
        try (LeaseStore store = store(Platform.descendants())) {
            Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder("sleep", "1"));
            LeaseRecord held = store.read("build").orElseThrow();
            assumeTrue(held.cgroup().isPresent(), "no cgroup can be made here (the cgroup v2 hierarchy is not writable)");
            assertThat(store.breakLease("build")).isPresent();
            assertThat(store.acquire("build", children.sleeping())).isInstanceOf(Acquisition.Granted.class);
            assertThat(s.process().waitFor()).isZero();
            removed(held.cgroup()); // by its supervisor, which no record asks to any more
        }
    }

    /**
     * A program named by a relative path that starts with {@code -} runs under the cgroup wrapper
     * as it runs without one, its arguments as given: no shell reads it as an option of its
     * {@code exec} (dash refused {@code -d/prog} with 2, and {@code exec --} is not every sh's).
     */
    @Test
    void aProgramWhosePathStartsWithADashRunsInItsCgroupWithItsArguments() throws Exception {
        assumeTrue(dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here (root, or a delegated subtree)");
        Path work = Files.createDirectories(tmp.resolve("work"));
        Path prog = Files.createDirectories(work.resolve("-d")).resolve("prog");
        Files.writeString(prog, "#!/bin/sh\nprintf '%s|' \"$@\" > out\n");
        assertThat(prog.toFile().setExecutable(true)).isTrue();
        try (LeaseStore store = store(Platform.descendants())) {
            Acquisition.Started s = (Acquisition.Started) store.spawn("build",
                    new ProcessBuilder("-d/prog", "-x", "two words", "--", "$HOME").directory(work.toFile()));
            assertThat(s.lease().record().cgroup()).as("started through the cgroup wrapper").isPresent();
            assertThat(s.process().waitFor()).as("it ran").isZero();
            assertThat(Files.readString(work.resolve("out"))).isEqualTo("-x|two words|--|$HOME|");
            removed(s.lease().record().cgroup());
        }
    }

    /** The tag of the directory store at {@code dir} that its cgroups' names carry. */
    static String tagOf(Path dir) throws IOException {
        Files.createDirectories(dir);
        return dev.proclive.lease.book.LeaseNames.storeTag(java.util.Map.of(LeaseStore.DIR_VARIABLE, dir.toRealPath().toString()));
    }

    @Test
    void emptyCgroupsThatNoRecordNamesAreSweptByTheNextSpawn() throws Exception {
        Optional<Path> own = dev.proclive.Cgroups.own();
        assumeTrue(own.isPresent() && Files.isWritable(own.get().resolve("cgroup.procs")),
                "no writable cgroup v2 hierarchy here (root, or a delegated subtree)");
        String tag = tagOf(tmp.resolve("leases"));
        Path stray = Files.createDirectory(own.get().resolve("proclive.build." + tag + ".0123456789ab"));
        Path other = Files.createDirectory(own.get().resolve("proclive.other." + tag + ".0123456789ab"));
        Path nested = Files.createDirectories(own.get().resolve("proclive.nested." + tag + ".0123456789ab").resolve("inner"));
        Path anotherStores = Files.createDirectory(own.get().resolve("proclive.build.0badc0de.0123456789ab"));
        Descendants sweepsAtOnce = new Delegating(Platform.descendants()) {
            @Override
            public List<String> emptyCgroups(String store, String madeNow, Duration olderThan) {
                // the strays, as an empty cgroup past its age: which ones the platform lists is
                // aStrayIsSweptOnlyOnceItIsOldAndEmpty's question; this one's is what a spawn does with them
                return List.of(stray.toString(), other.toString(), nested.getParent().toString(), anotherStores.toString());
            }
        };
        try (LeaseStore store = store(sweepsAtOnce)) {
            Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder("true"));
            assertThat(s.process().waitFor()).isZero();
            until(store, "build", r -> !r.granted());
            assertThat(stray).as("swept").doesNotExist();
            assertThat(other).as("swept").doesNotExist();
            assertThat(nested.getParent()).as("swept, the cgroup made below it first").doesNotExist();
            assertThat(anotherStores).as("another store's: its own to judge").exists();
        } finally {
            Files.deleteIfExists(stray);
            Files.deleteIfExists(other);
            Files.deleteIfExists(nested);
            Files.deleteIfExists(nested.getParent());
            Files.deleteIfExists(anotherStores);
        }
    }

    @Test
    void aStrayIsSweptOnlyOnceItIsOldAndEmpty() throws Exception {
        Optional<Path> own = dev.proclive.Cgroups.own();
        assumeTrue(own.isPresent() && Files.isWritable(own.get().resolve("cgroup.procs")),
                "no writable cgroup v2 hierarchy here (root, or a delegated subtree)");
        Path fresh = Files.createDirectory(own.get().resolve("proclive.fresh.0123abcd.0123456789ab"));
        Path anotherStores = Files.createDirectory(own.get().resolve("proclive.fresh.4567abcd.0123456789ab"));
        Path now = Files.createDirectory(own.get().resolve("proclive.now.0123abcd.0123456789ab"));
        Process inside = new ProcessBuilder("sleep", "60").start();
        started.add(inside);
        Descendants linux = Platform.descendants();
        try {
            assertThat(linux.emptyCgroups("0123abcd", now.toString(), Duration.ofMinutes(1))).doesNotContain(fresh.toString());
            assertThat(linux.emptyCgroups("0123abcd", now.toString(), Duration.ofSeconds(-1))).contains(fresh.toString())
                    .doesNotContain(anotherStores.toString());
            Files.writeString(fresh.resolve("cgroup.procs"), Long.toString(inside.pid()));
            assertThat(linux.emptyCgroups("0123abcd", now.toString(), Duration.ofSeconds(-1))).as("populated")
                    .doesNotContain(fresh.toString());
        } finally {
            inside.destroyForcibly();
            inside.waitFor();
            // the kernel empties it once the process is reaped
            Eventually.until(fresh + " emptied", Duration.ofSeconds(30), () -> !Files.exists(fresh)
                    || Files.readString(fresh.resolve("cgroup.events")).contains("populated 0"));
            Files.deleteIfExists(fresh);
            Files.deleteIfExists(anotherStores);
            Files.deleteIfExists(now);
        }
    }

    /**
     * Another store (another directory) under the same parent cgroup sweeps while this store's
     * command is about to enter the cgroup its record names (empty yet, and old by a clock that
     * ran ahead): the sweep leaves it, and the command runs.
     */
    @Test
    void anotherStoresSweepLeavesACgroupThisStoresRecordNames() throws Exception {
        assumeTrue(dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here (root, or a delegated subtree)");
        Descendants agesAhead = new Delegating(Platform.descendants()) {
            @Override
            public List<String> emptyCgroups(String store, String madeNow, Duration olderThan) {
                return super.emptyCgroups(store, madeNow, Duration.ofSeconds(-1)); // as if its age had passed
            }
        };
        try (LeaseStore other = LeaseStore.builder().directory(tmp.resolve("other")).descendants(agesAhead).build()) {
            Descendants sweptBeforeEntering = new Delegating(Platform.descendants()) {
                @Override
                public List<String> enter(String cgroup, List<String> command) {
                    try {
                        Acquisition.Started s = (Acquisition.Started) other.spawn("build", new ProcessBuilder("true"));
                        assertThat(s.process().waitFor()).isZero();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                    return super.enter(cgroup, command);
                }
            };
            try (LeaseStore store = store(sweptBeforeEntering)) {
                Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder("true"));
                assertThat(s.process().waitFor()).as("the command ran (125: its cgroup was swept from under it)").isZero();
                assertThat(s.lease().record().cgroup()).as("a cgroup was made and named").isPresent();
                removed(s.lease().record().cgroup());
            }
        }
    }

    @Test
    void aReservationHandedToAProcessThatNeverCarriedItsTokenEndsWithItUnderChurn() throws Exception {
        try (LeaseStore store = store(Platform.descendants())) {
            for (int round = 0; round < 10; round++) {
                Acquisition a = store.reserve("build", ProcLive.current().orElseThrow());
                assertThat(a).isInstanceOf(Acquisition.Granted.class);
                Process plain = new ProcessBuilder("sleep", "120").start();
                started.add(plain);
                // its environment shown: read between the two halves of its exec, it reads empty and proves nothing
                Eventually.until("the environment of pid " + plain.pid() + " shown", Duration.ofSeconds(30),
                        () -> Files.readAllBytes(Path.of("/proc", Long.toString(plain.pid()), "environ")).length > 0);
                Lease held = ((Acquisition.Granted) a).lease().handOff(ProcLive.identify(plain.pid()).orElseThrow());
                assertThat(held.record().tokenDigest()).as("the token is retired: %s", held.record()).isEmpty();
                plain.destroyForcibly();
                plain.waitFor();
                long begun = System.nanoTime();
                Acquisition next = store.acquire("build", children.sleeping());
                assertThat(next).as("round %d", round).isInstanceOf(Acquisition.Granted.class);
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begun)).isLessThan(5_000);
                ((Acquisition.Granted) next).lease().release();
            }
        }
    }

    @Test
    void aReservationHandedToACarrierKeepsItsToken() throws Exception {
        try (LeaseStore store = store(Platform.descendants())) {
            Acquisition.Granted a = (Acquisition.Granted) store.reserve("build", ProcLive.current().orElseThrow());
            ProcessBuilder pb = new ProcessBuilder("sleep", "120");
            pb.environment().put(LeaseStore.TOKEN_VARIABLE, a.lease().token().orElseThrow());
            Process carrier = pb.start();
            started.add(carrier);
            Lease held = a.lease().handOff(ProcLive.identify(carrier.pid()).orElseThrow());
            assertThat(held.record().tokenDigest()).isPresent();
        }
    }

    /** A seam that passes everything to {@code real}, for a test to change one answer. */
    static class Delegating implements Descendants {
        private final Descendants real;

        Delegating(Descendants real) {
            this.real = real;
        }

        @Override
        public boolean becomeSubreaper() {
            return real.becomeSubreaper();
        }

        @Override
        public Optional<List<Long>> orphans(Optional<String> startedAfter) {
            return real.orphans(startedAfter);
        }

        @Override
        public Optional<String> newCgroup(String lease, String store) {
            return real.newCgroup(lease, store);
        }

        @Override
        public Optional<String> cgroupId(String cgroup) {
            return real.cgroupId(cgroup);
        }

        @Override
        public List<String> enter(String cgroup, List<String> command) {
            return real.enter(cgroup, command);
        }

        @Override
        public Optional<List<Long>> members(String cgroup, String id) {
            return real.members(cgroup, id);
        }

        @Override
        public void remove(String cgroup) {
            real.remove(cgroup);
        }

        @Override
        public List<String> emptyCgroups(String store, String madeNow, Duration olderThan) {
            return real.emptyCgroups(store, madeNow, olderThan);
        }
    }
}
