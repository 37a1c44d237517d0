package dev.proclive.lease;

import dev.proclive.lease.book.Records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Children;
import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.book.LeaseJson;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The lease store over real processes: sleepers as holders, a real zombie, forged records on disk. */
@EnabledOnOs({OS.LINUX, OS.MAC})
class LeaseStoreTest {

    @TempDir
    Path tmp;
    Path dir;
    LeaseStore store;
    final Children children = new Children();

    @BeforeEach
    void open() throws IOException {
        dir = tmp.resolve("leases");
        store = LeaseStore.open(dir);
    }

    @AfterEach
    void kill() throws InterruptedException {
        try {
            store.close(); // a store that keeps grants writes its session file until it is closed
        } finally {
            children.killAll();
        }
    }


    private Identity exited() throws Exception {
        Process p = children.start("sleep", "120");
        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        p.destroyForcibly();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return id;
    }

    private static Lease granted(Acquisition a) {
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        return ((Acquisition.Granted) a).lease();
    }

    /** Writes a record by hand, as another process (or another version) may have left it. */
    private void writeRecord(Identity holder, long fence, Instant renewedAt) throws IOException {
        LeaseRecord r = new LeaseRecord("build", fence, LeaseRecord.State.HELD, holder, holder, renewedAt, renewedAt,
                Duration.ofSeconds(30), Optional.empty());
        Files.writeString(dir.resolve("build.lease"), LeaseJson.write(r));
    }

    private static Identity with(Identity id, String start, String boot, String host) {
        return new Identity(id.pid(), start, boot, host, id.name(), id.pidns());
    }

    @Test
    void aFreeLeaseGoesToALiveHolderThatNeedNotBeTheWriter() throws Exception {
        Identity holder = children.sleeping();
        Acquisition a = store.acquire("build", holder);
        Lease lease = granted(a);
        assertThat(((Acquisition.Granted) a).previous()).isEmpty();
        assertThat(lease.fence()).isEqualTo(1);
        assertThat(lease.holder()).isEqualTo(holder);
        assertThat(lease.name()).isEqualTo("build");
        LeaseRecord onDisk = store.read("build").orElseThrow();
        assertThat(onDisk).isEqualTo(lease.record());
        assertThat(onDisk.holder()).isEqualTo(holder);
        assertThat(onDisk.writer()).isEqualTo(ProcLive.current().orElseThrow());
        assertThat(onDisk.held()).isTrue();
        assertThat(onDisk.ttl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(Files.readString(dir.resolve("build.guard"))).isEqualTo("1");
    }

    /** Waits until the clock reads a millisecond past {@code at}: a record written now says a later time. */
    private static void millisecondAfter(java.time.Instant at) throws Exception {
        dev.proclive.Eventually.until("a millisecond passed", java.time.Duration.ofSeconds(5),
                () -> java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS).isAfter(at));
    }

    @Test
    void theSameHolderIsGrantedAgainAtTheSameFence() throws Exception {
        Identity holder = children.sleeping();
        Lease first = granted(store.acquire("build", holder));
        millisecondAfter(first.record().renewedAt());
        Acquisition again = store.acquire("build", holder);
        Lease second = granted(again);
        assertThat(second.fence()).isEqualTo(first.fence());
        assertThat(second.record().acquiredAt()).isEqualTo(first.record().acquiredAt());
        assertThat(second.record().renewedAt()).isAfter(first.record().renewedAt());
        assertThat(((Acquisition.Granted) again).previous()).contains(first.record());
    }

    @Test
    void aLiveHolderKeepsItsLease() throws Exception {
        Lease held = granted(store.acquire("build", children.sleeping()));
        Acquisition a = store.acquire("build", children.sleeping());
        assertThat(a).isInstanceOfSatisfying(Acquisition.Held.class, h -> {
            assertThat(h.record()).isEqualTo(held.record());
            assertThat(h.verdict().reason()).isEqualTo(Reason.MATCHED);
        });
        assertThat(store.read("build").orElseThrow()).isEqualTo(held.record());
    }

    @Test
    void anExitedHolderIsTakenOverAtOnceWithWhyKept() throws Exception {
        Identity gone = exited();
        writeRecord(gone, 4, Instant.now());
        Identity taker = children.sleeping();
        Acquisition a = store.acquire("build", taker);
        Lease lease = granted(a);
        assertThat(lease.fence()).isEqualTo(5);
        LeaseRecord.Takeover why = lease.record().previous().orElseThrow();
        assertThat(why.fence()).isEqualTo(4);
        assertThat(why.holder()).isEqualTo(gone);
        assertThat(why.verdict().reason()).isEqualTo(Reason.EXITED);
        assertThat(((Acquisition.Granted) a).previous()).map(LeaseRecord::holder).contains(gone);
        assertThat(store.read("build").orElseThrow().previous()).contains(why);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aZombieHolderIsTakenOver() throws Exception {
        long pid = children.zombieToBe("0.2");
        Identity zombie = ProcLive.identify(pid).orElseThrow();
        Children.await(zombie, v -> v.reason() == Reason.ZOMBIE);
        writeRecord(zombie, 1, Instant.now());
        assertThat(granted(store.acquire("build", children.sleeping())).record().previous().orElseThrow().verdict().reason())
                .isEqualTo(Reason.ZOMBIE);
    }

    @Test
    void aReusedPidAndAnotherBootAreTakenOver() throws Exception {
        Identity live = children.sleeping();
        writeRecord(with(live, live.start() + "1", live.boot(), live.host()), 1, Instant.now());
        assertThat(granted(store.acquire("build", children.sleeping())).record().previous().orElseThrow().verdict().reason())
                .isEqualTo(Reason.PID_REUSED);
        if (!live.boot().isEmpty()) {
            writeRecord(with(live, live.start(), "00000000-1111-2222-3333-444444444444", live.host()), 7, Instant.now());
            assertThat(granted(store.acquire("build", children.sleeping())).record().previous().orElseThrow().verdict().reason())
                    .isEqualTo(Reason.REBOOTED);
        }
    }

    @Test
    void anUnknownHolderKeepsItsLeaseByDefault() throws Exception {
        Identity elsewhere = with(children.sleeping(), "1", "", "another-host");
        writeRecord(elsewhere, 3, Instant.now().minus(1, ChronoUnit.HOURS));
        Acquisition a = store.acquire("build", children.sleeping());
        assertThat(a).isInstanceOfSatisfying(Acquisition.Undecided.class, u -> {
            assertThat(u.verdict().reason()).isEqualTo(Reason.OTHER_HOST);
            assertThat(u.eligibleAt()).isEmpty();
        });
        assertThat(store.read("build").orElseThrow().holder()).isEqualTo(elsewhere);
    }

    @Test
    void anUnknownHolderIsTakenOverOnlyWhenAllowedAndItsTtlHasPassed() throws Exception {
        try (LeaseStore lenient = LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().takeUnknownAfterTtl(true)
                .build()).build()) {
            Identity elsewhere = with(children.sleeping(), "1", "", "another-host");
            Instant fresh = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            writeRecord(elsewhere, 3, fresh);
            assertThat(lenient.acquire("build", children.sleeping())).isInstanceOfSatisfying(Acquisition.Undecided.class,
                    u -> assertThat(u.eligibleAt()).contains(fresh.plusSeconds(30)));

            writeRecord(elsewhere, 3, fresh.minusSeconds(31));
            Lease lease = granted(lenient.acquire("build", children.sleeping()));
            assertThat(lease.fence()).isEqualTo(4);
            assertThat(lease.record().previous().orElseThrow().verdict().liveness()).isEqualTo(Liveness.UNKNOWN);
        }
    }

    @Test
    void onlyALiveHolderCanBeGranted() throws Exception {
        Identity gone = exited();
        Acquisition a = store.acquire("build", gone);
        assertThat(a).isInstanceOf(Acquisition.NotAlive.class);
        assertThat(((Acquisition.NotAlive) a).verdict().reason()).isEqualTo(Reason.EXITED);
        assertThat(dir.resolve("build.lease")).doesNotExist();
    }

    @Test
    void theFenceNeverGoesBackwards() throws Exception {
        Identity holder = children.sleeping();
        Lease one = granted(store.acquire("build", holder));
        assertThat(one.release()).isTrue();
        Lease two = granted(store.acquire("build", holder));
        assertThat(two.fence()).isEqualTo(2);
        assertThat(store.breakLease("build")).map(LeaseRecord::fence).contains(2L);
        Lease three = granted(store.acquire("build", holder));
        assertThat(three.fence()).isEqualTo(3);
        Files.delete(dir.resolve("build.lease"));
        assertThat(store.read("build")).isEmpty();
        assertThat(granted(store.acquire("build", holder)).fence()).isEqualTo(4);
    }

    @Test
    void renewMovesRenewedAtAndFailsOnceTheLeaseIsLost() throws Exception {
        Identity holder = children.sleeping();
        Lease lease = granted(store.acquire("build", holder));
        millisecondAfter(lease.record().renewedAt());
        LeaseRecord renewed = lease.renew();
        assertThat(renewed.renewedAt()).isAfter(lease.record().acquiredAt());
        assertThat(lease.record()).isEqualTo(renewed);
        assertThat(store.renew("build", lease.fence()).fence()).isEqualTo(lease.fence());
        assertThatThrownBy(() -> store.renew("build", lease.fence() + 1)).isInstanceOf(LeaseLostException.class);

        store.breakLease("build");
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class)
                .satisfies(e -> assertThat(((LeaseLostException) e).name()).isEqualTo("build"));
        Files.delete(dir.resolve("build.lease"));
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(lease::ensureValid).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void releaseIsIdempotentAndNeverTouchesAnotherGrant() throws Exception {
        Identity holder = children.sleeping();
        Lease lease = granted(store.acquire("build", holder));
        assertThat(lease.isValid()).isTrue();
        lease.ensureValid();
        assertThat(lease.release()).isTrue();
        byte[] released = Files.readAllBytes(dir.resolve("build.lease"));
        assertThat(lease.release()).as("already released at this fence").isTrue();
        assertThat(Files.readAllBytes(dir.resolve("build.lease"))).isEqualTo(released);
        assertThat(lease.isValid()).isFalse();

        Lease next = granted(store.acquire("build", children.sleeping()));
        byte[] nextRecord = Files.readAllBytes(dir.resolve("build.lease"));
        lease.close();
        assertThat(lease.release()).as("another fence's now").isFalse();
        assertThat(store.release("build", lease.fence())).isFalse();
        assertThat(Files.readAllBytes(dir.resolve("build.lease"))).isEqualTo(nextRecord);
        assertThat(next.isValid()).isTrue();
        Files.delete(dir.resolve("build.lease"));
        assertThat(next.release()).as("no record").isFalse();
    }

    @Test
    void aGrantForAnotherHolderAtTheSameFenceIsNotThisLeases() throws Exception {
        Lease lease = granted(store.acquire("build", children.sleeping()));
        LeaseRecord r = lease.record();
        Identity other = children.sleeping();
        Files.writeString(dir.resolve("build.lease"), LeaseJson.write(new LeaseRecord("build", r.fence(), LeaseRecord.State.HELD,
                other, other, r.acquiredAt(), r.renewedAt(), r.ttl(), Optional.empty())));
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.release()).isFalse();
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
        assertThat(store.read("build").orElseThrow().holder()).isEqualTo(other);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".hidden", "-flag", "a/b", "a b", "ä", "../x", "x\n"})
    void aBadNameIsRefusedAndNothingIsWritten(String name) throws Exception {
        Identity holder = children.sleeping();
        assertThatThrownBy(() -> store.acquire(name, holder)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.read(name)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.breakLease(name)).isInstanceOf(IllegalArgumentException.class);
        try (var files = Files.list(dir)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void namesUpTo128CharactersAreFine() throws Exception {
        String longest = "a".repeat(128);
        assertThat(granted(store.acquire(longest, children.sleeping())).name()).isEqualTo(longest);
        assertThatThrownBy(() -> store.read(longest + "a")).isInstanceOf(IllegalArgumentException.class);
        assertThat(granted(store.acquire("v1.2_x-y", children.sleeping())).fence()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"garbage", "{}", "[]", "{\"name\":\"other\",\"fence\":1}",
            "{\"name\":\"build\",\"fence\":-1,\"state\":\"held\"}",
            "{\"name\":\"build\",\"fence\":1,\"state\":\"maybe\"}"})
    void aCorruptRecordIsReportedAndLeftAlone(String content) throws Exception {
        Files.createDirectories(dir);
        Path record = dir.resolve("build.lease");
        Files.writeString(record, content);
        Identity holder = children.sleeping();
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class);
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class);
        assertThatThrownBy(() -> store.renew("build", 1)).isInstanceOf(LeaseCorruptException.class);
        assertThatThrownBy(() -> store.release("build", 1)).isInstanceOf(LeaseCorruptException.class);
        assertThat(Files.readString(record)).isEqualTo(content);
    }

    /** What the rules call corrupt until break: break clears it, and no fence is handed out twice. */
    @ParameterizedTest
    @ValueSource(strings = {"garbage", "{}", "{\"name\":\"other\",\"fence\":1}",
            "{\"name\":\"build\",\"fence\":1,\"state\":\"maybe\"}"})
    void breakClearsACorruptRecordAndTheNextFenceIsAboveEveryOneGranted(String content) throws Exception {
        Identity holder = children.sleeping();
        long granted = ((Acquisition.Granted) store.acquire("build", holder)).lease().fence();
        Path record = dir.resolve("build.lease");
        Files.writeString(record, content);
        assertThat(store.breakLease("build")).as("nothing trusted to write a released record from").isEmpty();
        assertThat(record).doesNotExist();
        assertThat(store.read("build")).isEmpty();
        Acquisition next = store.acquire("build", children.sleeping());
        assertThat(next).isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) next).lease().fence()).isGreaterThan(granted);
    }

    @Test
    void breakOfANameNeverTakenLeavesNothingBehind() throws Exception {
        Files.createDirectories(dir);
        assertThat(store.breakLease("never")).isEmpty();
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).as("no guard made for it").doesNotContain("never.guard");
        }
    }

    @Test
    void aSymbolicLinkOrADirectoryInTheRecordsPlaceIsCorruptNeverFollowed() throws Exception {
        Path target = tmp.resolve("elsewhere.json");
        Files.writeString(target, "do not touch");
        Files.createSymbolicLink(dir.resolve("build.lease"), target);
        Identity holder = children.sleeping();
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("symbolic link");
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class);
        assertThat(Files.readString(target)).isEqualTo("do not touch");
        assertThat(Files.isSymbolicLink(dir.resolve("build.lease"))).isTrue();

        Files.createDirectory(dir.resolve("other.lease"));
        assertThatThrownBy(() -> store.acquire("other", holder)).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("directory");
    }

    @Test
    void aSymbolicLinkOrGarbageInTheGuardsPlaceIsCorrupt() throws Exception {
        Path target = tmp.resolve("fence.txt");
        Files.writeString(target, "5");
        Files.createSymbolicLink(dir.resolve("build.guard"), target);
        Identity holder = children.sleeping();
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class);
        assertThat(Files.readString(target)).isEqualTo("5");

        Files.writeString(dir.resolve("other.guard"), "not a number");
        assertThatThrownBy(() -> store.acquire("other", holder)).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("not a fence");
        assertThat(dir.resolve("other.lease")).doesNotExist();
    }

    /**
     * A guard with a second name (a hard link: a copy made with {@code cp -al}, a deduplicator, or a link
     * to another's file) is never written nor its modes changed: a fresh guard with its fence takes its
     * name, and one that holds no fence is corrupt, its bytes never quoted.
     */
    @Test
    @EnabledOnOs({OS.LINUX, OS.MAC})
    void aGuardWithASecondNameIsReplacedNeverWrittenNorShared() throws Exception {
        Path elsewhere = Files.writeString(tmp.resolve("backup.guard"), "3\n");
        Files.createLink(dir.resolve("build.guard"), elsewhere);
        Identity holder = children.sleeping();
        assertThat(granted(store.acquire("build", holder)).fence()).as("the fence goes on from the linked guard's")
                .isEqualTo(4);
        assertThat(Files.readString(elsewhere)).isEqualTo("3\n");
        assertThat(Files.isSameFile(elsewhere, dir.resolve("build.guard"))).as("a guard of its own now").isFalse();
        assertThat(Files.readString(dir.resolve("build.guard"))).isEqualTo("4");

        Path secret = Files.writeString(tmp.resolve("someone-elses.conf"), "password=hunter2\n");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Files.createLink(dir.resolve("other.guard"), secret);
        assertThatThrownBy(() -> store.read("other")).as("read without the lock").isInstanceOf(LeaseCorruptException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter2"));
        assertThatThrownBy(() -> store.acquire("other", holder)).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("break the lease")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter2"));
        assertThat(Files.readString(secret)).isEqualTo("password=hunter2\n");
        assertThat(dir.resolve("other.lease")).doesNotExist();
        assertThat(Files.isSameFile(secret, dir.resolve("other.guard"))).as("replaced, not kept").isFalse();
        assertThat(Files.readString(dir.resolve("other.guard"))).doesNotContain("hunter2");
        store.breakLease("other");
        assertThat(granted(store.acquire("other", holder)).fence()).as("break cleared it").isEqualTo(1);
        assertThat(Files.readString(secret)).isEqualTo("password=hunter2\n");

        // longer than any fence, in a directory whose guards are given its modes: never shared, nor written by break
        String longer = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL0ngm3Bvq5Ux8f5Hq9kz0s7b2 someone@elsewhere\n";
        Path keys = Files.writeString(tmp.resolve("authorized_keys"), longer);
        Files.setPosixFilePermissions(keys, PosixFilePermissions.fromString("rw-------"));
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwx---"));
        Files.createLink(shared.resolve("build.guard"), keys);
        try (LeaseStore sharedStore = LeaseStore.open(shared)) {
            assertThatThrownBy(() -> sharedStore.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class)
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("ssh-ed25519"));
            sharedStore.breakLease("build");
            assertThat(granted(sharedStore.acquire("build", holder)).fence()).isEqualTo(1);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(keys))).isEqualTo("rw-------");
        assertThat(Files.readString(keys)).isEqualTo(longer);
    }

    @Test
    void aGuardWrittenByHandStillSetsTheFloor() throws Exception {
        Files.writeString(dir.resolve("build.guard"), "41\n");
        assertThat(granted(store.acquire("build", children.sleeping())).fence()).isEqualTo(42);
        assertThat(Files.readString(dir.resolve("build.guard"))).isEqualTo("42");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aCreatedDirectoryAndItsFilesAreOwnerOnly() throws Exception {
        granted(store.acquire("build", children.sleeping()));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("build.lease"))))
                .isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("build.guard"))))
                .isEqualTo("rw-------");
    }

    @Test
    void aFileWhereTheDirectoryShouldBeIsRefused() throws Exception {
        Path file = tmp.resolve("file");
        Files.writeString(file, "x");
        assertThatThrownBy(() -> LeaseStore.open(file)).isInstanceOf(java.nio.file.NotDirectoryException.class);
    }

    @Test
    void temporaryFilesOfDeadWritersAreCleanedAndOthersKept() throws Exception {
        Identity dead = exited();
        Identity live = children.sleeping();
        Files.createDirectories(dir);
        Path deadTmp = dir.resolve(".build." + dead.pid() + "-" + dead.start() + ".tmp");
        Path liveTmp = dir.resolve(".build." + live.pid() + "-" + live.start() + ".tmp");
        Path otherLease = dir.resolve(".other." + dead.pid() + "-" + dead.start() + ".tmp");
        for (Path p : List.of(deadTmp, liveTmp, otherLease)) {
            Files.writeString(p, "{half a rec");
        }
        granted(store.acquire("build", live));
        assertThat(deadTmp).doesNotExist();
        assertThat(liveTmp).exists();
        assertThat(otherLease).as("another lease's too: one listing serves every lease").doesNotExist();
    }

    @Test
    void manyThreadsAndTwoStoresNeverHoldItTogether() throws Exception {
        int threads = 6;
        List<Identity> holders = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            holders.add(children.sleeping());
        }
        try (LeaseStore second = LeaseStore.open(dir)) {
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            ConcurrentLinkedQueue<Long> fences = new ConcurrentLinkedQueue<>();
            AtomicBoolean done = new AtomicBoolean();
            Path guard = dir.resolve("build.guard");
            // A second channel on the guard, opened and closed over and over by code that is not the store's.
            Thread meddler = new Thread(() -> {
                while (!done.get()) {
                    try (FileChannel c = FileChannel.open(guard, StandardOpenOption.READ)) {
                        c.size();
                    } catch (IOException e) {
                        // not created yet
                    }
                }
            });
            meddler.start();
            List<Thread> workers = new ArrayList<>();
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            for (int t = 0; t < threads; t++) {
                Identity holder = holders.get(t);
                LeaseStore s = t % 2 == 0 ? store : second;
                Thread w = new Thread(() -> {
                    int grants = 0;
                    try {
                        while (grants < 25) {
                            Acquisition a = s.acquire("build", holder);
                            if (a instanceof Acquisition.Granted g) {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                fences.add(g.lease().fence());
                                Thread.onSpinWait();
                                inside.decrementAndGet();
                                assertThat(g.lease().release()).isTrue();
                                grants++;
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                });
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join(120_000);
            }
            done.set(true);
            meddler.join();
            assertThat(errors).isEmpty();
            assertThat(overlaps).hasValue(0);
            assertThat(fences).hasSize(threads * 25).doesNotHaveDuplicates();
            assertThat(new ArrayList<>(fences)).isSorted();
        }
    }

    @Test
    void recordsRoundTripThroughTheirJson() throws Exception {
        Identity holder = children.sleeping();
        Lease lease = granted(store.acquire("build", holder));
        LeaseRecord r = lease.record();
        assertThat(LeaseJson.read("build", LeaseJson.write(r).getBytes(StandardCharsets.UTF_8))).isEqualTo(r);
        LeaseRecord withPrevious = new LeaseRecord("build", 9, LeaseRecord.State.RELEASED, holder, holder,
                r.acquiredAt(), r.renewedAt(), Duration.ofMillis(1500), Optional.of(new LeaseRecord.Takeover(8, holder,
                Verdict.of(Reason.OTHER_HOST, "elsewhere"), r.acquiredAt(), Optional.of(r.renewedAt()))));
        assertThat(LeaseJson.read("build", LeaseJson.write(withPrevious).getBytes(StandardCharsets.UTF_8))).isEqualTo(withPrevious);
        assertThat(LeaseJson.write(withPrevious)).contains("\"state\":\"released\"", "\"ttlMillis\":1500",
                "\"liveness\":\"unknown\",\"reason\":\"other_host\"");
        assertThat(Records.timestamp(Instant.parse("2026-11-29T10:00:00Z"))).isEqualTo("2026-11-29T10:00:00.000Z");
        assertThat(r.freshUntil()).isEqualTo(r.renewedAt().plusSeconds(30));
    }

    /** Each record write, counted in {@code writes}, says so through {@code writing} and lands only once {@code land} opens. */
    private void holdRecordWrites(java.util.concurrent.CountDownLatch writing, java.util.concurrent.CountDownLatch land,
                                  AtomicInteger writes) {
        store.files().beforeReplace(() -> {
            writes.incrementAndGet();
            writing.countDown();
            try {
                land.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /**
     * A close returns once a write under way has landed, and nothing is locked (so nothing written)
     * through the store after it: a directory removed just after a close sees no file appear in it.
     */
    @Test
    void closeWaitsForAWriteUnderWayAndWritesNothingAfter() throws Exception {
        Identity holder = children.sleeping();
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch land = new java.util.concurrent.CountDownLatch(1);
        holdRecordWrites(writing, land, new AtomicInteger());
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            java.util.concurrent.Future<Acquisition> acquired = two.submit(() -> store.acquire("build", holder));
            assertThat(writing.await(30, TimeUnit.SECONDS)).isTrue();
            java.util.concurrent.Future<?> closed = two.submit(store::close);
            assertThatThrownBy(() -> closed.get(200, TimeUnit.MILLISECONDS))
                    .as("close returned while a write was under way")
                    .isInstanceOf(java.util.concurrent.TimeoutException.class);
            land.countDown();
            closed.get(30, TimeUnit.SECONDS);
            assertThat(dir.resolve("build.lease")).as("in place before close returned").exists();
            assertThat(acquired.get(30, TimeUnit.SECONDS)).isInstanceOf(Acquisition.Granted.class);
        } finally {
            land.countDown();
            two.shutdownNow();
        }
        List<Path> before;
        try (var files = Files.list(dir)) {
            before = files.sorted().toList();
        }
        assertThatThrownBy(() -> store.acquire("other", holder)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        try (var files = Files.list(dir)) {
            assertThat(files.sorted().toList()).as("no guard, no record").isEqualTo(before);
        }
    }

    /** A call still waiting for a lease's lock when the store closes is refused before it writes anything. */
    @Test
    void aCallWaitingForTheLockWhenTheStoreClosesIsRefused() throws Exception {
        Identity holder = children.sleeping();
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch land = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger writes = new AtomicInteger();
        holdRecordWrites(writing, land, writes);
        java.util.concurrent.ExecutorService three = java.util.concurrent.Executors.newFixedThreadPool(3);
        try {
            java.util.concurrent.Future<Acquisition> first = three.submit(() -> store.acquire("build", holder));
            assertThat(writing.await(30, TimeUnit.SECONDS)).isTrue();
            Identity newcomer = children.sleeping();
            java.util.concurrent.atomic.AtomicReference<Thread> asking = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.Future<Acquisition> second = three.submit(() -> {
                asking.set(Thread.currentThread());
                return store.acquire("build", newcomer);
            });
            dev.proclive.Eventually.until("the second call waits for the lock", Duration.ofSeconds(30),
                    () -> asking.get() != null && asking.get().getState() == Thread.State.TIMED_WAITING);
            java.util.concurrent.Future<?> closed = three.submit(store::close);
            assertThatThrownBy(() -> second.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
            land.countDown();
            closed.get(30, TimeUnit.SECONDS);
            assertThat(first.get(30, TimeUnit.SECONDS)).isInstanceOf(Acquisition.Granted.class);
            assertThat(writes).as("the waiting call wrote nothing").hasValue(1);
        } finally {
            land.countDown();
            three.shutdownNow();
        }
    }

    /**
     * A waiter whose store is closed under it takes its ticket out as the close refuses it: the next
     * newcomer is not held up until that waiter's deadline, its process still alive.
     */
    @Test
    void aWaiterRefusedByItsStoresCloseLeavesNoTicketToWaitBehind() throws Exception {
        waiterRefusedByClose(false);
    }

    /** A close called on an interrupted thread (try-with-resources after shutdownNow) takes the tickets out too, and keeps the interrupt. */
    @Test
    void aCloseOnAnInterruptedThreadStillTakesItsWaitersTicketsOut() throws Exception {
        waiterRefusedByClose(true);
    }

    /** A wait ended by an interrupt (a launcher's SIGINT) takes its ticket out: the next caller is not held behind it. */
    @Test
    void aWaiterInterruptedWhileItWaitsLeavesNoTicket() throws Exception {
        Lease held = granted(store.acquire("build", children.sleeping()));
        Identity newcomer = children.sleeping();
        java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Acquisition> waited = one.submit(
                    () -> store.acquire("build", newcomer, Duration.ofMinutes(10)));
            Path queue = ticketOf(newcomer);
            waited.cancel(true);
            one.shutdown();
            assertThat(one.awaitTermination(30, TimeUnit.SECONDS)).as("the wait ended").isTrue();
            assertThat(!Files.exists(queue) || !Files.readString(queue).contains("\"pid\":" + newcomer.pid()))
                    .as("its ticket taken out").isTrue();
            assertThat(held.release()).isTrue();
            assertThat(store.acquire("build", children.sleeping()))
                    .as("nobody is ahead of a caller that does not wait").isInstanceOf(Acquisition.Granted.class);
        } finally {
            one.shutdownNow();
        }
    }

    /**
     * Two waits of one store for the same holder-to-be share its ticket: one ended by an interrupt leaves
     * it to the other, and a caller who came later is not served first.
     */
    @Test
    void aWaitEndedBesideAnotherForTheSameHolderKeepsTheirPlace() throws Exception {
        Lease held = granted(store.acquire("build", children.sleeping()));
        Identity waiter = children.sleeping();
        Identity later = children.sleeping();
        java.util.concurrent.ExecutorService three = java.util.concurrent.Executors.newFixedThreadPool(3);
        try (LeaseStore elsewhere = LeaseStore.open(dir)) {
            java.util.concurrent.Future<Acquisition> first = three.submit(
                    () -> store.acquire("build", waiter, Duration.ofMinutes(2)));
            ticketOf(waiter);
            java.util.concurrent.Future<Acquisition> second = Eventually.submittedInside(three, "waitInQueue", // the second wait in the queue
                    () -> store.acquire("build", waiter, Duration.ofMinutes(2)));
            second.cancel(true);
            java.util.concurrent.Future<Acquisition> third = three.submit(
                    () -> elsewhere.acquire("build", later, Duration.ofMinutes(2)));
            ticketOf(later);
            assertThat(held.release()).isTrue();
            assertThat(first.get(Eventually.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("served in the order they came").isInstanceOf(Acquisition.Granted.class);
            third.cancel(true);
        } finally {
            three.shutdownNow();
        }
    }

    /** Two stores of one JVM over one directory write as one process: one's ended wait leaves the other's ticket. */
    @org.junit.jupiter.params.ParameterizedTest(name = "the other wait ends by {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"an interrupt", "its store's close"})
    void aWaitEndedThroughAnotherStoreForTheSameHolderKeepsTheirPlace(String how) throws Exception {
        Lease held = granted(store.acquire("build", children.sleeping()));
        Identity waiter = children.sleeping();
        Identity later = children.sleeping();
        java.util.concurrent.ExecutorService three = java.util.concurrent.Executors.newFixedThreadPool(3);
        try (LeaseStore second = LeaseStore.open(dir); LeaseStore third = LeaseStore.open(dir)) {
            java.util.concurrent.Future<Acquisition> first = three.submit(
                    () -> store.acquire("build", waiter, Duration.ofMinutes(2)));
            ticketOf(waiter);
            java.util.concurrent.Future<Acquisition> again = Eventually.submittedInside(three, "waitInQueue", // the second wait in the queue
                    () -> second.acquire("build", waiter, Duration.ofMinutes(2)));
            java.util.concurrent.Future<Acquisition> after = three.submit(
                    () -> third.acquire("build", later, Duration.ofMinutes(2)));
            ticketOf(later);
            if (how.equals("an interrupt")) {
                again.cancel(true);
            } else {
                second.close();
                assertThatThrownBy(() -> again.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
            }
            assertThat(held.release()).isTrue();
            assertThat(first.get(Eventually.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("served in the order they came").isInstanceOf(Acquisition.Granted.class);
            after.cancel(true);
        } finally {
            three.shutdownNow();
        }
    }

    /**
     * A waiter whose clock is an hour ahead, stopped (SIGSTOP) once its ticket is in: its ticket's time
     * is an hour away by this clock, and nothing sets it again. A waiter behind it is served once the
     * ticket has stayed as it is for a ticket's life and a little more, not an hour later.
     */
    @Test
    void aStoppedWaiterWhoseClockIsAheadHoldsNobodyUpLong() throws Exception {
        Process holder = children.sleeper();
        granted(store.acquire("build", ProcLive.identify(holder.pid()).orElseThrow()));
        Identity stopped = children.sleeping();
        Files.writeString(dir.resolve("build.queue"), LeaseJson.waiter(new dev.proclive.lease.book.LeaseBook.Waiter(
                stopped, stopped, Instant.now().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.MILLIS))) + "\n");
        holder.destroyForcibly();
        long start = System.nanoTime();
        Acquisition a = store.acquire("build", children.sleeping(), Eventually.scaled(Duration.ofSeconds(60)));
        assertThat(a).as("served behind a ticket nobody sets again").isInstanceOf(Acquisition.Granted.class);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("after the ticket's life and a little more")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(15));
    }

    /** Waits until {@code newcomer}'s ticket is in the queue of lease {@code build}; the queue's file. */
    private Path ticketOf(Identity newcomer) throws Exception {
        Path queue = dir.resolve("build.queue");
        dev.proclive.Eventually.until("the newcomer's ticket", Duration.ofSeconds(30),
                () -> Files.exists(queue) && Files.readString(queue).contains("\"pid\":" + newcomer.pid()));
        return queue;
    }

    private void waiterRefusedByClose(boolean interrupted) throws Exception {
        Lease held = granted(store.acquire("build", children.sleeping()));
        LeaseStore closing = LeaseStore.open(dir);
        Identity newcomer = children.sleeping();
        java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Acquisition> waited = one.submit(
                    () -> closing.acquire("build", newcomer, Duration.ofMinutes(10)));
            Path queue = ticketOf(newcomer);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            closing.close();
            assertThat(Thread.interrupted()).as("the interrupt kept").isEqualTo(interrupted);
            assertThatThrownBy(() -> waited.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class);
            assertThat(held.release()).isTrue();
            assertThat(store.acquire("build", children.sleeping()))
                    .as("nobody is ahead once the refused waiter's store closed").isInstanceOf(Acquisition.Granted.class);
        } finally {
            one.shutdownNow();
            closing.close(); // again where the test failed before it: its waiter writes nothing more
        }
    }
}
