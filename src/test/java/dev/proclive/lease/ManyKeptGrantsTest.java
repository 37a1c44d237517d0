package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.core.LeaseEngine;
import dev.proclive.lease.core.Pause;
import dev.proclive.lease.files.LeaseFiles;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store keeping many grants on a directory looks at all of them in one look a tick, and reads
 * only the records that changed since it last read them: holding costs what the changes cost, not
 * what the grants number. A change by another writer to one of them is still told within a second.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class ManyKeptGrantsTest {

    @TempDir
    Path tmp;

    @Test
    void oneLookATickReadsOnlyWhatChangedAndABreakOfOneOf200IsToldWithinASecond() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Counting book = new Counting(LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker()));
        // renewed every 20 s: none is renewed while this test looks
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(60)).build();
        int many = 200;
        try (LeaseEngine keeper = new LeaseEngine(book, policy, self, LivenessChecker.system(), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < many; i++) {
                leases.add(((Acquisition.Granted) keeper.acquire("lease-" + i, self)).lease());
            }
            // the first look over all of them reads each once (nothing was read of them yet)
            int acquired = book.reads.get();
            Eventually.until("two looks over every kept record", Duration.ofSeconds(10),
                    () -> book.stamps.get() >= 2 * many || book.reads.get() - acquired >= 2 * many);

            int readsBefore = book.reads.get();
            int stampsBefore = book.stamps.get();
            Eventually.until("eight more looks over all of them", Duration.ofSeconds(20),
                    () -> book.stamps.get() - stampsBefore >= 8 * many || book.reads.get() - readsBefore >= 8 * many);
            int reads = book.reads.get() - readsBefore;
            assertThat(reads).as("records read in eight looks at %d records nobody changed", many).isLessThan(many / 4);

            // another writer breaks one of them
            int readsAtBreak = book.reads.get();
            try (LeaseStore operator = LeaseStore.open(tmp.resolve("leases"))) {
                assertThat(operator.breakLease("lease-57")).isPresent();
            }
            long broken = System.nanoTime();
            LeaseLost lost = leases.get(57).lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            long toldMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - broken);
            assertThat(lost.why()).isEqualTo(LeaseChange.BROKEN);
            assertThat(toldMillis).as("told within a second (scaled to this machine)")
                    .isLessThanOrEqualTo(Eventually.scaled(Duration.ofSeconds(1)).toMillis());
            assertThat(book.reads.get() - readsAtBreak).as("records read to tell it").isLessThan(many / 4);
            for (int i = 0; i < many; i++) {
                if (i != 57) {
                    assertThat(leases.get(i).lost()).as("lease-%d", i).isNotDone();
                    leases.get(i).ensureValid();
                }
            }
        }
    }

    /**
     * A grant is said lost 3/4 of its TTL after its last confirmation, and a newcomer may take it after the TTL: looks a
     * quarter second apart left a TTL under a second no margin (told up to 130 ms after a newcomer was granted).
     */
    @Test
    void aShortTtlIsLookedAtEveryEighthOfIt() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Counting book = new Counting(LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker())) {
            @Override
            public boolean lost(String name, long fence) {
                return false; // kept whatever this machine's load does to its renewals: only the looks are counted
            }
        };
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofMillis(400)).build();
        try (LeaseEngine keeper = new LeaseEngine(book, policy, self, LivenessChecker.system(), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            Lease lease = ((Acquisition.Granted) keeper.acquire("short", self)).lease();
            int before = book.stamps.get();
            long from = System.nanoTime();
            Thread.sleep(1000);
            int looks = book.stamps.get() - before;
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - from);
            // every 50 ms; every 250 ms gave at most 5 a second
            assertThat(looks).as("looks at a grant of TTL 400 ms in %d ms", elapsedMs).isGreaterThanOrEqualTo(
                    (int) (elapsedMs / 100));
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void recordsThisStoreWroteAreNotReadBackByItsLooks() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Counting book = new Counting(LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker()));
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(60)).build();
        int many = 50;
        try (LeaseEngine keeper = new LeaseEngine(book, policy, self, LivenessChecker.system(), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < many; i++) {
                leases.add(((Acquisition.Granted) keeper.acquire("lease-" + i, self)).lease());
            }
            int readsBefore = book.reads.get();
            for (int round = 0; round < 2; round++) {
                for (Lease lease : leases) {
                    lease.renew(); // each a rewrite of its record, as its holder asks
                }
            }
            int stampsBefore = book.stamps.get();
            Eventually.until("six looks over every kept record after", Duration.ofSeconds(30),
                    () -> book.stamps.get() - stampsBefore >= 6 * many);
            assertThat(book.reads.get() - readsBefore)
                    .as("records read while this store granted them and renewed each twice").isLessThan(many / 4);
            for (Lease lease : leases) {
                assertThat(lease.lost()).as(lease.name()).isNotDone();
            }

            // another writer's change is still read, and told
            try (LeaseStore operator = LeaseStore.open(tmp.resolve("leases"))) {
                assertThat(operator.breakLease("lease-7")).isPresent();
            }
            assertThat(leases.get(7).lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                    .why()).isEqualTo(LeaseChange.BROKEN);
        }
    }

    @Test
    void keptGrantsAreNotRewrittenAndOneSessionFileKeepsThemFreshPastTheirOwnTtl() throws Exception {
        LeaseLifecycleTest.Host host = new LeaseLifecycleTest.Host();
        LeaseLifecycleTest.MutableClock clock = new LeaseLifecycleTest.MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        Path leases = tmp.resolve("leases");
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(3)).build(); // the session file: every second
        try (LeaseStore keeper = store(leases, policy, host, clock)) {
            List<LeaseRecord> granted = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                granted.add(((Acquisition.Granted) keeper.acquire("lease-" + i, host.start(60 + i, 50, "6" + i))).lease().record());
            }
            clock.now = clock.now.plusSeconds(60); // long past every record's own renewedAt plus its TTL
            Eventually.until("a session file written at 10:01 that names all 50", Duration.ofSeconds(20),
                    () -> SessionFiles.texts(leases).stream().anyMatch(text -> text.contains("\"renewedAt\":\"2026-12-01T10:01:00.000Z\"")
                            && text.split("\"lease-", -1).length == 51));
            assertThat(SessionFiles.texts(leases)).as("one file for all the store's grants").hasSize(1);
            for (LeaseRecord r : granted) {
                assertThat(keeper.read(r.name())).as("not rewritten to stay fresh").contains(r);
            }

            // Seen from elsewhere, lease-0's holder is UNKNOWN (the record now names another host): a
            // newcomer that takes such a lease after its TTL waits for the session's, not the record's.
            Path file = leases.resolve("lease-0.lease");
            Files.writeString(file, Files.readString(file).replace("\"host\":\"here\"", "\"host\":\"another-host\""));
            try (LeaseStore lenient = store(leases, LeasePolicy.builder().ttl(Duration.ofSeconds(3)).takeUnknownAfterTtl(true).build(),
                    host, clock)) {
                assertThat(lenient.acquire("lease-0", host.start(200, 50, "2000")))
                        .isInstanceOfSatisfying(Acquisition.Undecided.class,
                                u -> assertThat(u.eligibleAt()).contains(Instant.parse("2026-12-01T10:01:03Z")));
                keeper.close(); // its file stays, and is written no more
                clock.now = clock.now.plusSeconds(4);
                assertThat(lenient.acquire("lease-0", host.start(201, 50, "2010"))).isInstanceOf(Acquisition.Granted.class);
            }
        }
    }

    @Test
    void aGrantKeptByItsSessionFileIsNotUnconfirmedAtThreeQuartersOfItsTtl() throws Exception {
        // each write must land within 5/12 of the TTL: on a busy machine the TTL a quiet one needs, scaled
        Duration ttl = Eventually.scaled(Duration.ofSeconds(4));
        try (LeaseStore store = LeaseStore.builder().directory(tmp.resolve("leases"))
                .policy(LeasePolicy.builder().ttl(ttl).build()).build()) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            LeaseRecord granted = lease.record();
            long start = System.nanoTime();
            Eventually.until("two TTLs held", Duration.ofSeconds(30), () -> System.nanoTime() - start > 2 * ttl.toNanos());
            assertThat(lease.lost()).as("its record was never rewritten; its session file was").isNotDone();
            assertThat(lease.isValid()).isTrue();
            assertThat(store.read("build")).contains(granted);
        }
    }

    @Test
    void aReservationTheChildClaimedIsNoLongerNamedByTheReserversSessionFile() throws Exception {
        LeaseLifecycleTest.Host host = new LeaseLifecycleTest.Host();
        LeaseLifecycleTest.MutableClock clock = new LeaseLifecycleTest.MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        Path leases = tmp.resolve("leases");
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(3)).build(); // the session file: every second
        try (LeaseStore launcher = store(leases, policy, host, clock)) {
            Lease other = ((Acquisition.Granted) launcher.acquire("other", host.start(59, 50, "590"))).lease();
            Lease reserved = ((Acquisition.Granted) launcher.reserve("build", host.start(60, 50, "600"))).lease();
            Identity child = host.start(61, 60, "1005");
            host.tokens.put(61L, reserved.token().orElseThrow());
            // the child claims it through a store of its own, which then ends (a CLI's): nobody keeps its grant
            try (LeaseStore childs = store(leases, policy, host, clock)) {
                assertThat(childs.claim("build", reserved.token().orElseThrow(), child)).isInstanceOf(Acquisition.Granted.class);
            }
            assertThat(reserved.lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the launcher's store saw the claim").isNotNull();
            assertThat(reserved.release()).as("the child's now: not released by the launcher").isFalse();

            // Seen from elsewhere, the child is UNKNOWN (the record now names another host).
            Path file = leases.resolve("build.lease");
            Files.writeString(file, Files.readString(file).replace("\"host\":\"here\"", "\"host\":\"another-host\""));
            clock.now = clock.now.plusSeconds(60); // long past the claim's renewedAt plus its TTL
            Eventually.until("a session file of the launcher written at 10:01", Duration.ofSeconds(20),
                    () -> SessionFiles.texts(leases).stream().anyMatch(text -> text.contains("\"renewedAt\":\"2026-12-01T10:01:00.000Z\"")));
            try (LeaseStore lenient = store(leases, LeasePolicy.builder().ttl(Duration.ofSeconds(3)).takeUnknownAfterTtl(true).build(),
                    host, clock)) {
                assertThat(lenient.acquire("build", host.start(200, 50, "2000")))
                        .as("the launcher's session keeps what it keeps, not the child's grant it let go")
                        .isInstanceOf(Acquisition.Granted.class);
            }
            assertThat(other.isValid()).isTrue();
        }
    }

    @Test
    void aKeeperWhoseSessionWritesFailSaysSoBeforeANewcomerMayTakeWhatItKeeps() throws Exception {
        LeaseLifecycleTest.Host host = new LeaseLifecycleTest.Host();
        Path leases = tmp.resolve("leases");
        Duration ttl = Duration.ofSeconds(4);
        LeasePolicy policy = LeasePolicy.builder().ttl(ttl).build(); // the keeper's session file: every 1.3 s
        Identity holder = host.start(61, 50, "610");
        try (LeaseStore hook = LeaseStore.builder().directory(leases).policy(policy).checker(LivenessChecker.of(host))
                .descendants(Descendants.NONE).build()) {
            assertThat(hook.acquire("build", holder)).isInstanceOf(Acquisition.Granted.class);
        } // the JVM that took it (a hook's) is gone: only the keeper keeps it
        List<String> said = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (LeaseStore keeper = LeaseStore.builder().directory(leases).policy(policy).checker(LivenessChecker.of(host))
                .descendants(Descendants.NONE).build()) {
            Thread keeping = new Thread(() -> {
                try {
                    keeper.keepHolders(Duration.ofMillis(20), said::add);
                } catch (InterruptedException e) {
                    // stopped
                }
            });
            keeping.start();
            try {
                Eventually.until("a session file of the keeper naming build", Duration.ofSeconds(20),
                        () -> SessionFiles.texts(leases).stream().anyMatch(text -> text.contains("\"build\":1")));
                // its writes start failing, as on a file system remounted read-only
                Runnable readOnly = () -> {
                    throw new java.io.UncheckedIOException(new IOException("Read-only file system"));
                };
                keeper.files().beforeReplace(readOnly);
                keeper.files().beforeSessionWrite(readOnly);
                long failing = System.nanoTime();
                String line = Eventually.until("the keeper says it cannot keep build", Duration.ofSeconds(20),
                        () -> said.stream().filter(l -> l.contains("cannot keep lease build")).findFirst(),
                        Optional::isPresent).orElseThrow();
                assertThat(Duration.ofNanos(System.nanoTime() - failing)).as("said before a newcomer may take it")
                        .isLessThan(ttl);
                assertThat(line).contains("at fence 1", "unconfirmed");
            } finally {
                keeping.interrupt();
                keeping.join(10_000);
            }
        }
    }

    @Test
    void aSessionFileWithATimeNoRecordCanHoldIsIgnoredAndNothingThrows() throws Exception {
        LeaseLifecycleTest.Host host = new LeaseLifecycleTest.Host();
        LeaseLifecycleTest.MutableClock clock = new LeaseLifecycleTest.MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        Path leases = tmp.resolve("leases");
        Files.createDirectories(leases);
        // planted by a writer long dead (pid 9 is in no process table here), naming the grant to come
        Files.writeString(leases.resolve(".session.9-90.0123456789abcdef"),
                "{\"renewedAt\":\"+1000000000-12-31T23:59:59.999999999Z\",\"ttlMillis\":3000,\"grants\":{\"build\":1}}");
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(3)).build();
        try (LeaseStore first = store(leases, policy, host, clock)) {
            assertThat(first.acquire("build", host.start(60, 50, "600"))).as("its first write looks for dead writers' files")
                    .isInstanceOf(Acquisition.Granted.class);
        }
        // Seen from elsewhere, the holder is UNKNOWN: a newcomer that takes it after the TTL judges its freshness.
        Path file = leases.resolve("build.lease");
        Files.writeString(file, Files.readString(file).replace("\"host\":\"here\"", "\"host\":\"another-host\""));
        clock.now = clock.now.plusSeconds(60);
        try (LeaseStore lenient = store(leases, LeasePolicy.builder().ttl(Duration.ofSeconds(3)).takeUnknownAfterTtl(true).build(),
                    host, clock)) {
            assertThat(lenient.acquire("build", host.start(200, 50, "2000"))).isInstanceOf(Acquisition.Granted.class);
        }
    }

    /** A store over {@code leases} judging by {@code host}'s processes and telling time by {@code clock}. */
    private static LeaseStore store(Path leases, LeasePolicy policy, LeaseLifecycleTest.Host host,
                                    LeaseLifecycleTest.MutableClock clock) throws IOException {
        return LeaseStore.builder().directory(leases).policy(policy).checker(LivenessChecker.of(host)).clock(clock)
                .descendants(Descendants.NONE).build();
    }

    /**
     * A watch closed while it asks the book what changed next leaves nothing waiting: the future the
     * book handed out then is cancelled (on etcd it holds a place in the prefix watch until the key
     * next changes).
     */
    @Test
    void aWatchClosedWhileItAsksWhatChangedLeavesNothingWaiting() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Counting book = new Counting(LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker()));
        List<CompletableFuture<Void>> handedOut = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicReference<AutoCloseable> watch = new AtomicReference<>();
        book.changes = name -> {
            CompletableFuture<Void> f = new CompletableFuture<>();
            handedOut.add(f);
            if (handedOut.size() == 2) { // the watch is closed as it asks again
                try {
                    watch.get().close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            return Optional.of(f);
        };
        try (LeaseEngine keeper = new LeaseEngine(book, LeasePolicy.defaults(), self, LivenessChecker.system(),
                Clock.systemUTC(), Pause.REAL, Descendants.NONE)) {
            watch.set(keeper.watch("build", event -> { }));
            assertThat(handedOut).hasSize(1);
            handedOut.get(0).complete(null); // a change: the watch looks, and asks again
            Eventually.until("the watch asked again", Duration.ofSeconds(10), () -> handedOut.size() == 2);
            Eventually.until("what it was handed as it closed is cancelled", Duration.ofSeconds(10),
                    () -> handedOut.get(1).isCancelled());
        }
    }

    /**
     * Many watches are one piece of work: one thread looks at all of them, a change to one is told to
     * its listener, and the thread ends once the last watch is closed, the store still open.
     */
    @Test
    void manyWatchesShareOneThreadThatEndsWithTheLastOfThem() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        LeaseBook book = LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker());
        int many = 100;
        try (LeaseEngine keeper = new LeaseEngine(book, LeasePolicy.defaults(), self, LivenessChecker.system(),
                Clock.systemUTC(), Pause.REAL, Descendants.NONE)) {
            List<AutoCloseable> watches = new ArrayList<>();
            java.util.concurrent.BlockingQueue<LeaseEvent> heard = new java.util.concurrent.LinkedBlockingQueue<>();
            for (int i = 0; i < many; i++) {
                String name = "lease-" + i;
                watches.add(keeper.watch(name, e -> {
                    if (e.record().name().equals("lease-42")) {
                        heard.add(e);
                    }
                }));
            }
            Eventually.until("the watches' thread runs", Duration.ofSeconds(10), () -> eventThreads() == 1);
            assertThat(keeper.acquire("lease-42", self)).isInstanceOf(Acquisition.Granted.class);
            LeaseEvent granted = heard.poll(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(granted).as("the grant of one of %d watched leases is told", many).isNotNull();
            assertThat(granted.kind()).isEqualTo(LeaseChange.GRANTED);
            assertThat(eventThreads()).as("threads looking at %d watches", many).isEqualTo(1);
            for (AutoCloseable w : watches) {
                w.close();
            }
            Eventually.until("the watches' thread ends with the last watch", Duration.ofSeconds(10),
                    () -> eventThreads() == 0);
        }
    }

    /**
     * A listener that closes its watch as it is told is told nothing more, not even the rest of what
     * one look found (a grant that came and went between two looks is two events).
     */
    @Test
    void aListenerThatClosesItsWatchIsToldNothingMore() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Path elsewhere = tmp.resolve("elsewhere");
        try (LeaseStore other = LeaseStore.open(elsewhere)) {
            Lease lease = ((Acquisition.Granted) other.acquire("build", self)).lease();
            assertThat(lease.release()).isTrue();
        }
        Files.createDirectories(tmp.resolve("leases"));
        try (LeaseStore store = LeaseStore.open(tmp.resolve("leases"))) {
            List<LeaseChange> told = new java.util.concurrent.CopyOnWriteArrayList<>();
            AtomicReference<AutoCloseable> watch = new AtomicReference<>();
            watch.set(store.watch("build", e -> {
                told.add(e.kind());
                try {
                    watch.get().close();
                } catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            }));
            // a released record appears whole: a grant that came and went since the watch's last look
            Path moving = tmp.resolve("leases/.moving");
            Files.copy(elsewhere.resolve("build.lease"), moving);
            Files.move(moving, tmp.resolve("leases/build.lease"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            Eventually.until("the first event", Duration.ofSeconds(10), () -> !told.isEmpty());
            Thread.sleep(300); // three more looks' time
            assertThat(told).as("told after the listener closed its watch").containsExactly(LeaseChange.GRANTED);
        }
    }

    private static long eventThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("proclive-lease-events")).count();
    }

    /** A directory's book that counts what its store reads of it, and how often it asks what changed. */
    static class Counting extends ForwardingBook {
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger stamps = new AtomicInteger();
        final AtomicInteger writes = new AtomicInteger();

        Counting(LeaseBook real) {
            super(real);
        }

        @Override
        public Optional<LeaseRecord> read(String name) throws IOException {
            reads.incrementAndGet();
            return real.read(name);
        }

        @Override
        public Optional<Object> stamp(String name) throws IOException {
            stamps.incrementAndGet();
            return real.stamp(name);
        }

        @Override
        public <T> T locked(String name, Locked<T> work) throws IOException {
            writes.incrementAndGet();
            return real.locked(name, work);
        }

        @Override
        public <T> T locked(String name, Duration most, Locked<T> work) throws IOException {
            writes.incrementAndGet();
            return real.locked(name, most, work);
        }

        /**
         * What {@link #changed} answers: the real book's unless a test says otherwise (then the book
         * also says it {@link #expires()}, as etcd's does, whose watches wait on these).
         */
        volatile java.util.function.Function<String, Optional<CompletableFuture<Void>>> changes;

        @Override
        public boolean expires() {
            return changes != null || real.expires();
        }

        @Override
        public Optional<CompletableFuture<Void>> changed(String name) {
            java.util.function.Function<String, Optional<CompletableFuture<Void>>> c = changes;
            return c == null ? real.changed(name) : c.apply(name);
        }
    }
}
