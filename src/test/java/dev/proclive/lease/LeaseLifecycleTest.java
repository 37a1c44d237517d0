package dev.proclive.lease;

import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.Records;
import dev.proclive.spi.internal.KernelIntrospector;
import dev.proclive.spi.internal.Descendants;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Reason;
import dev.proclive.lease.core.Pause;
import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The lease's life — reserve, hand off, claim, adopt by token, end — and its TTL rules over a
 * process table and a clock the test sets: on every OS, Windows included, without sleeping.
 */
class LeaseLifecycleTest {

    static final String BOOT = "boot-1";
    static final String HOST = "here";
    static final String PIDNS = "4026531836";
    static final long UID = 1000;

    @TempDir
    Path dir;
    final Host host = new Host();
    final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
    LeaseStore store;

    /** A process table, a floor and a scan the test decides. */
    static final class Host implements KernelIntrospector {
        final Map<Long, ProcessInfo> table = new ConcurrentHashMap<>();
        volatile EnvironmentScan scan = new EnvironmentScan(List.of(), true, "");
        /** Scans to answer first, one a pass, before {@link #scan}. */
        final java.util.Deque<EnvironmentScan> passes = new java.util.concurrent.ConcurrentLinkedDeque<>();
        volatile int scanCount;
        volatile String lastVariable;
        volatile java.util.function.Predicate<String> lastValue;
        volatile long lastUid = -2;
        volatile Optional<String> lastStartedAfter;
        /** Each process's PROCLIVE_LEASE_TOKEN; a pid in {@link #unreadable} has an environment that cannot be read. */
        final Map<Long, String> tokens = new ConcurrentHashMap<>();
        final java.util.Set<Long> unreadable = ConcurrentHashMap.newKeySet();

        Host() {
            table.put(50L, new ProcessInfo(50, 1, "java", "500", ProcessState.LIVE)); // this process
        }

        Identity start(long pid, long ppid, String start) {
            table.put(pid, new ProcessInfo(pid, ppid, "p" + pid, start, ProcessState.LIVE));
            return new Identity(pid, start, BOOT, HOST, "p" + pid, PIDNS);
        }

        void exit(Identity id) {
            table.remove(id.pid());
        }

        @Override
        public ProcessLookup lookup(long pid) {
            ProcessInfo info = table.get(pid);
            return info == null ? new ProcessLookup.Gone("not in the table") : new ProcessLookup.Found(info);
        }

        @Override
        public ProcessLookup self() {
            return lookup(50);
        }

        @Override
        public Optional<String> bootId() {
            return Optional.of(BOOT);
        }

        @Override
        public Optional<String> hostName() {
            return Optional.of(HOST);
        }

        @Override
        public Optional<String> pidNamespace() {
            return Optional.of(PIDNS);
        }

        @Override
        public Optional<String> startFloor() {
            return Optional.of("1000");
        }

        @Override
        public EnvironmentScan scanEnvironments(String variable, java.util.function.Predicate<String> value, long uid,
                                                Optional<String> startedAfter) {
            scanCount++;
            lastVariable = variable;
            lastValue = value;
            lastUid = uid;
            lastStartedAfter = startedAfter;
            EnvironmentScan first = passes.poll();
            return first != null ? first : scan;
        }

        @Override
        public EnvironmentScan readEnvironment(long pid, String variable, java.util.function.Predicate<String> value) {
            ProcessInfo info = table.get(pid);
            if (info == null || unreadable.contains(pid)) {
                return EnvironmentScan.incomplete("pid " + pid + " cannot be read");
            }
            String token = tokens.get(pid);
            boolean holds = variable.equals("PROCLIVE_LEASE_TOKEN") && token != null && value.test(token);
            return new EnvironmentScan(holds ? List.of(info) : List.of(), true, "");
        }

        @Override
        public java.util.OptionalLong userId(long pid) {
            return table.containsKey(pid) ? java.util.OptionalLong.of(UID) : java.util.OptionalLong.empty();
        }
    }

    static final class MutableClock extends Clock {
        volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }

        /** Monotonic time: moved on only by the time waits take, never by setting {@link #now}. */
        volatile long nanos;

        long nanos() {
            return nanos;
        }

        /** Time passes: {@code d} on the wall clock and on the monotonic one. */
        void advance(Duration d) {
            now = now.plus(d);
            nanos += d.toNanos();
        }
    }

    /** Every store a test opened, closed after it: one that keeps grants writes until it is closed. */
    final List<LeaseStore> opened = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void open() throws IOException {
        store = open(LeasePolicy.defaults());
    }

    @AfterEach
    void closeStores() {
        opened.forEach(LeaseStore::close);
    }

    /** A store over this test's book: a directory here; etcd in {@link EtcdLifecycleTest}. */
    LeaseStore open(LeasePolicy policy) throws IOException {
        return open(policy, pause);
    }

    final LeaseStore open(LeasePolicy policy, Pause pause) throws IOException {
        LeaseStore store = build(policy, pause);
        opened.add(store);
        return store;
    }

    LeaseStore build(LeasePolicy policy, Pause pause) throws IOException {
        return LeaseStore.builder().directory(dir.resolve("leases")).policy(policy).checker(LivenessChecker.of(host)).clock(clock).pause(pause).descendants(Descendants.NONE).build();
    }

    /** Lease build's record as stored. */
    String recordText() throws IOException {
        return Files.readString(dir.resolve("leases/build.lease"));
    }

    /** Replaces lease build's stored record by hand, as an operator (or an older version) might have written it. */
    void writeRecordText(String text) throws IOException {
        Files.createDirectories(dir.resolve("leases"));
        Files.writeString(dir.resolve("leases/build.lease"), text);
    }

    /**
     * {@code fence} is the one a new grant after {@code previous} gets: on files the next number;
     * {@link EtcdLifecycleTest} says what it is on etcd (a later revision).
     */
    void assertNextFence(long fence, long previous) {
        assertThat(fence).isEqualTo(previous + 1);
    }

    boolean recordExists() {
        return Files.exists(dir.resolve("leases/build.lease"));
    }

    /**
     * Whether the store ends a grant the moment its holder (another process) dies, as on etcd, where
     * nobody should wait out the record's TTL; in a directory the next taker takes it over.
     */
    boolean endsDeadHolders() {
        return false;
    }

    /** Whether a waiter's ticket for lease {@code build} is in the queue. */
    boolean waiterQueued() throws IOException {
        return Files.exists(dir.resolve("leases/build.queue"));
    }

    /** Every pause taken, and how long it was asked to last. */
    final List<Duration> pauses = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * Waits as the store asks, by the test's clock: a holder's end is waited for in real time (the
     * exit watch polls the fake table), at most as long as asked, and then the clock has moved on
     * by what was asked; a sleep only moves the clock.
     */
    final Pause pause = new Pause() {
        @Override
        public void await(java.util.concurrent.CompletableFuture<?> end, Duration most) throws InterruptedException {
            pauses.add(most);
            try {
                end.get(most.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                return;
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                clock.advance(most);
            }
        }

        @Override
        public void sleep(Duration d) {
            pauses.add(d);
            clock.advance(d);
        }

        @Override
        public long nanoTime() {
            return clock.nanos();
        }
    };

    private static Lease granted(Acquisition a) {
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        return ((Acquisition.Granted) a).lease();
    }

    private Identity elsewhere(long pid) {
        return new Identity(pid, "1", BOOT, "another-host", "remote", PIDNS);
    }

    /**
     * A store closed while one of its leases is held keeps it no longer: its holder is told at once (unconfirmed), not
     * once its TTL has run out, when someone else may be granted it; one released first is told nothing.
     */
    @Test
    void aLeaseWhoseStoreClosesIsToldAtOnce() throws Exception {
        LeaseStore closing = open(LeasePolicy.defaults());
        Lease held = granted(closing.acquire("build", host.start(72, 50, "720")));
        Lease released = granted(closing.acquire("other", host.start(73, 50, "730")));
        assertThat(released.release()).isTrue();
        assertThat(held.lost()).isNotDone();
        closing.close();
        assertThat(held.lost()).as("told as its store closed").isDone();
        assertThat(held.lost().join().why()).isEqualTo(LeaseChange.UNCONFIRMED);
        assertThat(held.lost().join().detail()).contains("store was closed");
        assertThat(held.isValid()).isFalse();
        assertThat(released.lost()).as("released before: not lost").isNotDone();
    }

    /** A closed store grants nothing, also to a wait under way through it: nothing would keep the grant or tell its loss. */
    @Test
    void aClosedStoreGrantsNothingNotEvenToAWaitUnderWay() throws Exception {
        Identity holder = host.start(70, 50, "700");
        granted(store.acquire("build", holder));
        LeaseStore closing = open(LeasePolicy.defaults());
        Identity newcomer = host.start(71, 50, "710");
        java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Acquisition> waited = one.submit(
                    () -> closing.acquire("build", newcomer, Duration.ofMinutes(10)));
            Eventually.until("the newcomer queued", Duration.ofSeconds(30), this::waiterQueued);
            closing.close();
            host.exit(holder);
            assertThatThrownBy(() -> waited.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("the lease store is closed");
            assertThatThrownBy(() -> closing.acquire("build", newcomer)).isInstanceOf(IllegalStateException.class);
            assertThat(store.acquire("build", newcomer)).as("free for a store that is open")
                    .isInstanceOf(Acquisition.Granted.class);
        } finally {
            one.shutdownNow();
        }
    }

    @Test
    void aLostLeaseSaysWhyItIsLost() throws Exception {
        Identity holder = host.start(70, 50, "700");
        Lease broken = granted(store.acquire("build", holder));
        assertThat(store.breakLease("build")).isPresent();
        assertThatThrownBy(broken::ensureValid).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("was broken by an operator (lease break)").hasMessageNotContaining("reserved")
                .satisfies(e -> assertThat(((LeaseLostException) e).lost().why()).isEqualTo(LeaseChange.BROKEN));
        assertThat(broken.lost()).as("ensureValid's finding is the lease's loss").isCompletedWithValueMatching(
                l -> l.why() == LeaseChange.BROKEN && l.record().orElseThrow().ended().isPresent());
        assertThat(broken.knownLost()).isTrue();

        Lease taken = granted(store.acquire("build", holder));
        host.exit(holder);
        Lease next;
        if (endsDeadHolders()) { // the store ends the grant itself the moment its holder dies
            LeaseLost died = taken.lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(died.why()).as("the store watched its holder end").isEqualTo(LeaseChange.HOLDER_DIED);
            assertThat(died.detail()).contains("fence " + taken.fence() + " of pid 70 ended as exited");
            next = granted(store.acquire("build", host.start(71, 50, "710")));
            assertThatThrownBy(taken::ensureValid).as("lost once, for the first reason, though another holds it now")
                    .isInstanceOf(LeaseLostException.class).hasMessageContaining("ended as exited")
                    .satisfies(e -> assertThat(((LeaseLostException) e).lost()).isEqualTo(died));
        } else { // the next taker finds its holder dead and takes it over
            next = granted(store.acquire("build", host.start(71, 50, "710")));
            assertThatThrownBy(taken::ensureValid).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("was taken over by pid 71 at fence " + next.fence())
                    .hasMessageContaining("its holder was dead (exited)")
                    .satisfies(e -> assertThat(((LeaseLostException) e).lost().why()).isEqualTo(LeaseChange.TAKEN_OVER));
        }
        assertThat(next.release()).isTrue();
        assertThatThrownBy(next::ensureValid).hasMessageContaining("was released");
        assertThat(next.lost()).as("released here: never lost").isNotDone();
        Lease reserved = granted(store.reserve("build", host.start(72, 50, "720")));
        assertThatThrownBy(reserved::ensureValid).hasMessageContaining("is reserved: a reserved lease admits no write");
    }

    @Test
    void breakClearsWhatCannotBeTrustedAndFencesKeepGrowing() throws Exception {
        Identity holder = host.start(70, 50, "700");
        long granted = ((Acquisition.Granted) store.acquire("build", holder)).lease().fence();
        writeRecordText("this is not a lease record");
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class);
        assertThat(store.breakLease("build")).as("removed, not rewritten").isEmpty();
        assertThat(recordExists()).isFalse();
        Lease next = ((Acquisition.Granted) store.acquire("build", host.start(71, 50, "710"))).lease();
        assertNextFence(next.fence(), granted);
    }

    @Test
    void anUnknownHoldersLeaseIsTakenAfterTheTtlItPromisedWithoutSleeping() throws Exception {
        LeaseStore remote = open(LeasePolicy.builder().ttl(Duration.ofMinutes(2)).build());
        Identity local = host.start(60, 50, "600");
        granted(remote.acquire("build", local));
        // The record now names a holder on another host, renewed at 10:00 with a two-minute promise.
        writeRecordText(recordText().replace("\"host\":\"here\"", "\"host\":\"another-host\""));

        LeaseStore lenient = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build());
        Identity taker = host.start(61, 50, "610");
        clock.now = clock.now.plusSeconds(119);
        Acquisition early = lenient.acquire("build", taker);
        assertThat(early).isInstanceOf(Acquisition.Undecided.class);
        assertThat(((Acquisition.Undecided) early).eligibleAt()).contains(Instant.parse("2026-12-01T10:02:00Z"));
        clock.now = clock.now.plusSeconds(1);
        Acquisition.Granted late = (Acquisition.Granted) lenient.acquire("build", taker);
        LeaseRecord.Takeover previous = late.lease().record().previous().orElseThrow();
        assertThat(previous.verdict().reason()).isEqualTo(Reason.OTHER_HOST);
        assertThat(previous.renewedAt()).contains(Instant.parse("2026-12-01T10:00:00Z"));
        assertThat(previous.at()).isEqualTo(Instant.parse("2026-12-01T10:02:00Z"));
        assertNextFence(late.lease().fence(), 1);
    }

    @Test
    void aTakeoverByANewcomerWhoseClockIsBehindIsAcquiredNoEarlierThanItTookOver() throws Exception {
        Instant start = clock.now;
        LeaseRecord taken = null;
        // where records expire (etcd) the store ends a dead holder's grant itself once its exit watch sees
        // the end, which may come first: then the newcomer takes a free lease, and the test goes again
        for (int round = 0; round < 5 && (taken == null || taken.previous().isEmpty()); round++) {
            clock.now = start;
            Identity dead = host.start(60 + 2 * round, 50, Integer.toString(600 + 20 * round));
            granted(store.acquire("build" + round, dead));
            host.exit(dead);
            clock.now = clock.now.minusSeconds(90); // the newcomer's clock is behind the dead holder's
            Identity taker = host.start(61 + 2 * round, 50, Integer.toString(610 + 20 * round));
            taken = granted(store.acquire("build" + round, taker)).record();
        }
        LeaseRecord.Takeover previous = taken.previous().orElseThrow();
        assertThat(previous.at()).isEqualTo(Instant.parse("2026-12-01T10:00:00Z"));
        assertThat(taken.acquiredAt()).as("a grant does not begin before the takeover it follows")
                .isEqualTo(previous.at());
        assertThat(taken.renewedAt()).isEqualTo(previous.at());
    }

    @Test
    void aRenewalKeepsThePromisedTtlAndMovesRenewedAt() throws Exception {
        LeaseStore longTtl = open(LeasePolicy.builder().ttl(Duration.ofMinutes(10)).build());
        Lease lease = granted(longTtl.acquire("build", host.start(60, 50, "600")));
        clock.now = clock.now.plusSeconds(5);
        LeaseRecord renewed = store.renew("build", lease.fence());
        assertThat(renewed.ttl()).isEqualTo(Duration.ofMinutes(10));
        assertThat(renewed.renewedAt()).isEqualTo(clock.now);
        assertThat(renewed.acquiredAt()).isEqualTo(clock.now.minusSeconds(5));
    }

    @Test
    void aReservationHasATokenItsRecordKeepsOnlyTheDigestOfAndAFloor() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Acquisition.Granted first = (Acquisition.Granted) store.reserve("build", launcher);
        Lease reserved = first.lease();
        assertThat(first.again()).isFalse();
        assertThat(reserved.state()).isEqualTo(LeaseRecord.State.RESERVED);
        String token = reserved.token().orElseThrow();
        assertThat(Records.isToken(token)).isTrue();
        assertThat(reserved.record().startedAfter()).contains("1000");
        assertThat(reserved.record().reserverUid()).hasValue(UID);
        assertThat(reserved.holder()).isEqualTo(launcher);
        String onDisk = recordText();
        assertThat(onDisk).as("a record others may read never holds the token").doesNotContain(token)
                .contains("\"tokenDigest\":\"" + Records.digest(token) + "\"", "\"reserverUid\":1000")
                .doesNotContain("\"token\"");
        assertThat(Records.hasToken(store.read("build").orElseThrow(), token)).isTrue();
        assertThat(Records.hasToken(store.read("build").orElseThrow(), "f".repeat(32))).isFalse();
        Lease other = granted(store.reserve("other", launcher));
        assertThat(other.token()).isNotEqualTo(reserved.token());
    }

    @Test
    void aReservationIsOneIntentASecondReserveByItsOwnReserverIsHeld() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        Acquisition second = store.reserve("build", launcher);
        assertThat(second).isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) second).record().fence()).isEqualTo(reserved.fence());
        assertThat(Records.hasToken(store.read("build").orElseThrow(), reserved.token().orElseThrow())).as("unchanged").isTrue();
    }

    @Test
    void aReservedLeaseAdmitsNoWriter() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        assertThat(reserved.isValid()).isFalse();
        assertThatThrownBy(reserved::ensureValid).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("reserved lease admits no write");
        Lease childs = reserved.handOff(host.start(61, 60, "1005"));
        assertThat(childs.isValid()).isTrue();
        childs.ensureValid();
    }

    @Test
    void aLiveReserversReservationIsHeld() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        granted(store.reserve("build", launcher));
        Acquisition a = store.acquire("build", host.start(70, 50, "700"));
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) a).record().holder()).isEqualTo(launcher);
        assertThat(host.scanCount).as("no scan while the reserver lives").isZero();
    }

    @Test
    void whenTheLauncherDiedTheProcessCarryingTheTokenIsAdoptedFenceKept() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        Identity child = host.start(61, 60, "1005");
        host.exit(launcher);
        host.table.put(61L, new ProcessInfo(61, 1, "p61", "1005", ProcessState.LIVE)); // reparented to init
        host.scan = new EnvironmentScan(List.of(host.table.get(61L)), true, "");

        Acquisition a = store.acquire("build", host.start(70, 50, "1100"));
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) a).verdict().liveness()).isEqualTo(Liveness.ALIVE);
        assertThat(host.lastVariable).isEqualTo("PROCLIVE_LEASE_TOKEN");
        assertThat(host.lastValue.test(reserved.token().orElseThrow())).as("the token is what the scan accepts").isTrue();
        assertThat(host.lastValue.test("f".repeat(32))).isFalse();
        assertThat(host.lastUid).as("carriers only of the reserver's user").isEqualTo(UID);
        assertThat(host.lastStartedAfter).contains("1000");
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(r.holder()).isEqualTo(child);
        assertThat(r.fence()).isEqualTo(reserved.fence());
        assertThat(r.adoptedBy()).contains("token");
        assertThat(LeaseJson.write(r)).contains("\"adoptedBy\":\"token\"");
    }

    @Test
    void anUnusedReservationIsFreedOnlyByACompleteScanWithTheReserverDead() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        host.exit(launcher);
        Identity newcomer = host.start(70, 50, "1100");

        host.scan = EnvironmentScan.incomplete("pid 9: its environment is not readable by this user");
        Acquisition partial = store.acquire("build", newcomer);
        assertThat(partial).isInstanceOf(Acquisition.Undecided.class);
        assertThat(((Acquisition.Undecided) partial).eligibleAt()).isEmpty();
        assertThat(store.read("build").orElseThrow().state()).isEqualTo(LeaseRecord.State.RESERVED);

        host.scan = new EnvironmentScan(List.of(), true, "");
        Acquisition.Granted free = (Acquisition.Granted) store.acquire("build", newcomer);
        assertNextFence(free.lease().fence(), reserved.fence());
        LeaseRecord.Takeover previous = free.lease().record().previous().orElseThrow();
        assertThat(previous.holder()).isEqualTo(launcher);
        assertThat(previous.verdict().reason()).isEqualTo(Reason.EXITED);
    }

    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs({org.junit.jupiter.api.condition.OS.LINUX,
            org.junit.jupiter.api.condition.OS.MAC})
    void aChildThatExitsBeforeItsHandOffWhileItsTokenMayLiveOnLeavesTheLeaseToTheCarriersNotTheReserver()
            throws Exception {
        // Every pass of the scan sees processes end under it: a chain the child started that re-forks may carry the token.
        host.scan = new EnvironmentScan(List.of(), false, "pid 61 ended during the pass, in each of 4 passes", true);
        // The child exits before it can be identified (this host's table never lists it).
        Acquisition.Started s = (Acquisition.Started) store.spawn("build", new ProcessBuilder("sh", "-c", "exit 3"));
        assertThat(s.process().waitFor(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.ended()).as("not ended while the token may live on").isEmpty();
        assertThat(r.holder().pid()).as("the child's, not the live reserver's").isEqualTo(s.process().pid());
        assertThat(r.holder().start()).as("it exited before it could be identified: its pid alone").isEmpty();
        assertThat(r.fence()).isEqualTo(s.lease().fence());

        Identity newcomer = host.start(70, 50, "1100");
        assertThat(store.acquire("build", newcomer)).as("a carrier may still write under the fence")
                .isInstanceOf(Acquisition.Undecided.class);
        host.scan = new EnvironmentScan(List.of(), true, "");
        assertNextFence(granted(store.acquire("build", newcomer)).fence(), r.fence()); // nothing carries it: freed
    }

    @Test
    void anInconclusiveScanNeverFreesAReservationAndAReForkedCarrierIsAdopted() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        host.exit(launcher);
        Identity newcomer = host.start(70, 50, "1100");

        host.scan = new EnvironmentScan(List.of(), false, "pid 61 ended during the pass, in each of 4 passes", true);
        Acquisition undecided = store.acquire("build", newcomer);
        assertThat(undecided).isInstanceOf(Acquisition.Undecided.class);
        assertThat(store.read("build").orElseThrow().state()).isEqualTo(LeaseRecord.State.RESERVED);

        Identity reforked = host.start(62, 1, "1006");
        host.scan = new EnvironmentScan(List.of(host.table.get(62L)), true, "");
        assertThat(store.acquire("build", newcomer)).isInstanceOf(Acquisition.Held.class);
        assertThat(store.read("build").orElseThrow().holder()).isEqualTo(reforked);

        // the adopted carrier re-forked again: its lease still belongs to whatever carries the token
        host.exit(reforked);
        Identity again = host.start(63, 1, "1007");
        host.scan = new EnvironmentScan(List.of(host.table.get(63L)), true, "");
        assertThat(store.acquire("build", newcomer)).isInstanceOf(Acquisition.Held.class);
        assertThat(store.read("build").orElseThrow().holder()).isEqualTo(again);
        assertThat(store.read("build").orElseThrow().fence()).isEqualTo(reserved.fence());

        host.exit(again);
        host.scan = new EnvironmentScan(List.of(), true, "");
        assertNextFence(granted(store.acquire("build", newcomer)).fence(), reserved.fence()); // no carrier left: freed
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "1.5", "99999999999999", "-5", ""})
    void aStartedAfterThatIsNoStartTimeOfThisBootIsCorruptNeverAFloor(String floor) throws Exception {
        Identity launcher = host.start(60, 50, "600");
        granted(store.reserve("build", launcher));
        host.exit(launcher);
        String changed = recordText().replace("\"startedAfter\":\"1000\"", "\"startedAfter\":\"" + floor + "\"");
        writeRecordText(changed);
        assertThatThrownBy(() -> store.acquire("build", host.start(70, 50, "1100")))
                .isInstanceOf(LeaseCorruptException.class).hasMessageContaining("startedAfter");
        assertThat(recordText()).isEqualTo(changed);
        assertThat(host.scanCount).as("no scan over a floor that skips everything").isZero();
    }

    @Test
    void aCarrierOfAnotherUserIsNeverAdopted() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        granted(store.reserve("build", launcher));
        host.exit(launcher);
        // what a scan says of a process of another user with the token: incomplete, never a carrier
        host.scan = EnvironmentScan.incomplete("pid 66 carries it but runs as uid 1001, not uid 1000");
        Acquisition a = store.acquire("build", host.start(70, 50, "1100"));
        assertThat(a).isInstanceOf(Acquisition.Undecided.class);
        assertThat(store.read("build").orElseThrow().state()).isEqualTo(LeaseRecord.State.RESERVED);
    }

    @Test
    void anOlderRecordWithATokenReadsAsItsDigest() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        String token = reserved.token().orElseThrow();
        String digest = Records.digest(token);
        writeRecordText(recordText().replace("\"tokenDigest\":\"" + digest + "\"",
                "\"token\":\"" + token + "\""));
        assertThat(store.read("build").orElseThrow().tokenDigest()).contains(digest);
        writeRecordText(recordText().replace("\"token\":\"" + token + "\"",
                "\"token\":\"" + token + "\",\"tokenDigest\":\"" + "0".repeat(64) + "\""));
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class).hasMessageContaining("disagree");
    }

    @Test
    void aReserverOnAnotherHostKeepsItsReservationWhateverTheScanSays() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        granted(store.reserve("build", launcher));
        writeRecordText(recordText().replaceFirst("\"host\":\"here\"", "\"host\":\"another-host\""));
        LeaseStore lenient = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build());
        clock.now = clock.now.plus(Duration.ofDays(1));
        Acquisition a = lenient.acquire("build", host.start(70, 50, "1100"));
        assertThat(a).isInstanceOf(Acquisition.Undecided.class);
        assertThat(((Acquisition.Undecided) a).verdict().reason()).isEqualTo(Reason.OTHER_HOST);
    }

    @Test
    void theChildClaimsItsReservationFenceKept() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        Identity child = host.start(61, 60, "1005");
        String token = reserved.token().orElseThrow();
        host.tokens.put(61L, token);

        Identity impostor = host.start(63, 1, "1007"); // knows the token, does not carry it
        Acquisition refused = store.claim("build", token, impostor);
        assertThat(refused).isInstanceOf(Acquisition.NotCarrier.class);
        assertThat(store.read("build").orElseThrow().state()).as("nothing changed").isEqualTo(LeaseRecord.State.RESERVED);
        host.unreadable.add(63L);
        assertThat(store.claim("build", token, impostor)).as("an environment that cannot be read proves nothing")
                .isInstanceOf(Acquisition.Held.class);

        Acquisition.Granted claimed = (Acquisition.Granted) store.claim("build", token, child);
        assertThat(claimed.again()).isFalse();
        assertThat(claimed.lease().fence()).isEqualTo(reserved.fence());
        assertThat(claimed.lease().state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(claimed.lease().holder()).isEqualTo(child);
        assertThat(((Acquisition.Granted) store.claim("build", token, child)).again()).isTrue();
        assertThat(reserved.isValid()).as("the reservation is the child's now").isFalse();
        assertThatThrownBy(() -> reserved.handOff(child)).isInstanceOf(LeaseLostException.class);

        Identity stranger = host.start(62, 1, "1006");
        host.tokens.put(62L, "f".repeat(32));
        assertThat(store.claim("build", "f".repeat(32), stranger)).isInstanceOf(Acquisition.Held.class);
        assertThat(store.claim("build", token, stranger)).isInstanceOf(Acquisition.NotCarrier.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef", "g123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef0"})
    void aTokenThatIsNot32LowercaseHexDigitsIsRefused(String token) throws Exception {
        Identity child = host.start(61, 60, "1005");
        assertThatThrownBy(() -> store.claim("build", token, child)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("32 lowercase hex digits");
        assertThat(recordExists()).isFalse();
    }

    @Test
    void aHandOffKeepsAReservationsFenceAndGivesAHeldLeaseTheNext() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        Identity child = host.start(61, 60, "1005");
        Lease childs = reserved.handOff(child);
        assertThat(childs.fence()).isEqualTo(reserved.fence());
        assertThat(childs.state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(childs.token()).isEqualTo(reserved.token());
        assertThat(reserved.isValid()).isFalse();
        assertThat(childs.isValid()).isTrue();

        Identity successor = host.start(62, 61, "1010");
        Lease next = childs.handOff(successor);
        assertNextFence(next.fence(), childs.fence()); // a new writer: the old one's late writes must be refused
        assertThat(childs.isValid()).isFalse();
        assertThat(next.release()).isTrue();
        assertNextFence(granted(store.acquire("build", successor)).fence(), next.fence()); // the handed-off fence is known

        host.exit(child);
        Lease again = granted(store.reserve("other", launcher));
        assertThatThrownBy(() -> again.handOff(child)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dead");
        assertThat(store.read("other").orElseThrow().state()).isEqualTo(LeaseRecord.State.RESERVED);
        assertThat(again.isValid()).as("a reservation admits no writer").isFalse();
    }

    @Test
    void everyEndedGrantSaysHowWithTheHoldersVerdictThen() throws Exception {
        Identity holder = host.start(60, 50, "600");
        Lease lease = granted(store.acquire("build", holder));
        assertThat(lease.release()).isTrue();
        LeaseRecord.Ending released = store.read("build").orElseThrow().ended().orElseThrow();
        assertThat(released.how()).isEqualTo(LeaseChange.RELEASED);
        assertThat(released.verdict().liveness()).isEqualTo(Liveness.ALIVE);
        assertThat(released.exitCode()).isEmpty();

        Lease second = granted(store.acquire("build", holder));
        assertThat(second.record().ended()).as("a new grant has not ended").isEmpty();
        LeaseRecord broken = store.breakLease("build").orElseThrow();
        assertThat(broken.ended().orElseThrow().how()).isEqualTo(LeaseChange.BROKEN);
        assertThat(broken.ended().orElseThrow().verdict().liveness()).as("a live holder's lease broken shows as such")
                .isEqualTo(Liveness.ALIVE);
        assertThat(LeaseJson.write(broken)).contains("\"ended\":{\"how\":\"broken\"", "\"liveness\":\"alive\"");

        Lease third = granted(store.acquire("build", holder));
        host.exit(holder);
        assertThat(third.exited(3)).isTrue();
        LeaseRecord exited = store.read("build").orElseThrow();
        assertThat(exited.ended().orElseThrow().how()).isEqualTo(LeaseChange.EXITED);
        assertThat(exited.ended().orElseThrow().exitCode()).hasValue(3);
        assertThat(exited.ended().orElseThrow().verdict().reason()).isEqualTo(Reason.EXITED);
        assertThat(LeaseJson.write(exited)).contains("\"how\":\"exited\"", "\"exitCode\":3");
        assertThat(exited.state()).isEqualTo(LeaseRecord.State.RELEASED);
    }

    @Test
    void aHolderThatIsNotAliveIsAResultNotAnException() throws Exception {
        Identity gone = host.start(60, 50, "600");
        host.exit(gone);
        for (Acquisition a : List.of(store.acquire("build", gone), store.reserve("build", gone),
                store.claim("build", "0".repeat(32), gone))) {
            assertThat(a).isInstanceOf(Acquisition.NotAlive.class);
            assertThat(((Acquisition.NotAlive) a).verdict().reason()).isEqualTo(Reason.EXITED);
        }
        assertThat(recordExists()).isFalse();
    }

    @Test
    void twoProcessesActingForOneHolderShareItAndAreToldSo() throws Exception {
        Identity agent = host.start(60, 50, "600");
        Acquisition.Granted firstHook = (Acquisition.Granted) store.acquire("build", agent);
        Acquisition.Granted secondHook = (Acquisition.Granted) store.acquire("build", agent);
        assertThat(firstHook.again()).isFalse();
        assertThat(secondHook.again()).isTrue();
        assertThat(secondHook.lease().fence()).isEqualTo(firstHook.lease().fence());
    }

    @Test
    void waitingForAHolderEndsWhenItExits() throws Exception {
        Identity holder = host.start(60, 50, "600");
        granted(store.acquire("build", holder));
        Identity newcomer = host.start(70, 50, "700");
        assertThat(store.acquire("build", newcomer, Duration.ZERO)).isInstanceOf(Acquisition.Held.class);
        Thread exiting = new Thread(() -> {
            try { // the holder exits once the newcomer waits: its ticket is in the queue
                Eventually.until("the newcomer's ticket", Duration.ofSeconds(10), this::waiterQueued);
            } catch (Exception e) {
                return;
            }
            host.exit(holder);
        });
        exiting.start();
        long started = System.nanoTime();
        Acquisition a = store.acquire("build", newcomer, Duration.ofSeconds(20));
        long millis = (System.nanoTime() - started) / 1_000_000;
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(millis).as("woken by the exit, not the deadline").isLessThan(10_000);
        exiting.join();

        Identity third = host.start(80, 50, "800");
        long before = System.nanoTime();
        assertThat(store.acquire("build", third, Duration.ofMillis(300))).isInstanceOf(Acquisition.Held.class);
        assertThat((System.nanoTime() - before) / 1_000_000).as("returns at the deadline").isBetween(250L, 5_000L);
    }

    @Test
    void anUndecidedLeaseIsWaitedForUntilItsEligibleAtByTheStoresClockWithoutSleeping() throws Exception {
        LeaseStore remote = open(LeasePolicy.builder().ttl(Duration.ofMinutes(2)).build());
        granted(remote.acquire("build", host.start(60, 50, "600")));
        writeRecordText(recordText().replace("\"host\":\"here\"", "\"host\":\"another-host\""));
        LeaseStore lenient = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build());
        long before = System.nanoTime();
        Acquisition a = lenient.acquire("build", host.start(61, 50, "610"), Duration.ofMinutes(5));
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(clock.now).as("woken at eligibleAt, by the clock").isEqualTo(Instant.parse("2026-12-01T10:02:00Z"));
        assertThat(pauses).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(2)));
        assertThat((System.nanoTime() - before) / 1_000_000).as("two minutes waited without sleeping").isLessThan(5_000);

        // An eligibleAt beyond the wait is not slept until, but the record is looked at again while the
        // wait lasts: its UNKNOWN holder may still let the lease go.
        writeRecordText(recordText().replace("\"host\":\"here\"", "\"host\":\"another-host\""));
        pauses.clear();
        Instant asked = clock.now;
        Acquisition early = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build())
                .acquire("build", host.start(62, 50, "620"), Duration.ofSeconds(10));
        assertThat(early).isInstanceOf(Acquisition.Undecided.class);
        assertThat(pauses).isNotEmpty().allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(2)));
        assertThat(Duration.between(asked, clock.now)).as("the whole wait").isEqualTo(Duration.ofSeconds(10));
    }

    /** A pause that passes on the test's clocks, counted in {@code pauses}, and runs {@code after} after each. */
    private Pause pausing(Runnable after) {
        return new Pause() {
            @Override
            public void await(java.util.concurrent.CompletableFuture<?> end, Duration most) {
                sleep(most); // a book that can tell a record's change waits through await: the same look
            }

            @Override
            public void sleep(Duration d) {
                pauses.add(d);
                clock.advance(d);
                after.run();
            }

            @Override
            public long nanoTime() {
                return clock.nanos();
            }
        };
    }

    /** An UNKNOWN holder that lets the lease go within the wait is followed by the waiter, though it is never eligible. */
    @Test
    void aWaiterOverAnUnknownHolderIsGrantedOnceThatHolderReleases() throws Exception {
        Lease held = granted(store.acquire("build", host.start(60, 50, "600")));
        writeRecordText(recordText().replace("\"host\":\"here\"", "\"host\":\"another-host\""));
        int[] looks = {0};
        Pause releasing = pausing(() -> {
            if (++looks[0] == 3) {
                try {
                    writeRecordText(recordText().replace("\"state\":\"held\"", "\"state\":\"released\""));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        });
        Acquisition a = open(LeasePolicy.defaults(), releasing).acquire("build", host.start(70, 50, "1100"),
                Duration.ofSeconds(30));
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) a).lease().fence()).isGreaterThan(held.fence());
    }

    @Test
    void anUndecidedLeaseOverADeadHolderIsLookedAtAgainWhileTheWaitLasts() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        granted(store.reserve("build", launcher));
        host.exit(launcher);
        host.scan = EnvironmentScan.incomplete("pid 9: its environment is not readable by this user");
        // the scan becomes complete after a few looks (the unreadable process ended)
        int[] looks = {0};
        Pause counting = pausing(() -> {
            if (++looks[0] == 3) {
                host.scan = new EnvironmentScan(List.of(), true, "");
            }
        });
        LeaseStore waiting = open(LeasePolicy.defaults(), counting);
        Acquisition a = waiting.acquire("build", host.start(70, 50, "1100"), Duration.ofSeconds(30));
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(pauses).containsExactly(Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100));

        // over a holder that is UNKNOWN, the record is looked at again while the wait lasts (that holder
        // may let the lease go), and the last answer comes at the deadline
        pauses.clear();
        writeRecordText(recordText().replaceFirst("\"host\":\"here\"", "\"host\":\"another-host\""));
        Instant asked = clock.now;
        assertThat(waiting.acquire("build", host.start(71, 50, "1200"), Duration.ofSeconds(30)))
                .isInstanceOf(Acquisition.Undecided.class);
        assertThat(pauses).isNotEmpty().allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(Duration.ofSeconds(2)));
        assertThat(Duration.between(asked, clock.now)).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void aWaitForALiveHolderEndsAtTheDeadlineByTheStoresClock() throws Exception {
        granted(store.acquire("build", host.start(60, 50, "600")));
        Instant start = clock.now;
        Acquisition a = store.acquire("build", host.start(70, 50, "700"), Duration.ofMillis(4500));
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        // in slices of at most 250 ms, between which the wait's own deadline is counted
        assertThat(pauses).hasSize(18).allSatisfy(d -> assertThat(d).isEqualTo(Duration.ofMillis(250)));
        assertThat(clock.now).isEqualTo(start.plusMillis(4500));
    }

    @Test
    void aWallClockSteppedBackWhileWaitingNeverStretchesTheWait() throws Exception {
        granted(store.acquire("build", host.start(60, 50, "600")));
        long start = clock.nanos();
        // the wall clock goes back an hour at each pause, the monotonic one on by what was waited
        Pause steppingBack = pausing(() -> {
            clock.now = clock.now.minus(Duration.ofHours(1));
            assertThat(pauses).as("pauses of a wait of 4.5 s, 250 ms each").hasSizeLessThanOrEqualTo(18);
        });
        Acquisition a = open(LeasePolicy.defaults(), steppingBack).acquire("build", host.start(70, 50, "700"),
                Duration.ofMillis(4500));
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        assertThat(Duration.ofNanos(clock.nanos() - start)).isEqualTo(Duration.ofMillis(4500));
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"state\":5", "\"state\":\"reserved\"", "\"token\":12", "\"token\":\"abc\"",
            "\"tokenDigest\":\"abc\"", "\"tokenDigest\":5", "\"reserverUid\":-1", "\"reserverUid\":\"0\"",
            "\"reserverUid\":4294967296", "\"startedAfter\":\"abc\"", "\"startedAfter\":5",
            "\"ended\":{\"how\":\"released\",\"at\":\"2026-12-01T10:00:00.000Z\",\"liveness\":\"alive\",\"reason\":\"matched\",\"exitCode\":0}",
            "\"ended\":{\"how\":\"exited\",\"at\":\"2026-11-01T10:00:00.000Z\",\"liveness\":\"dead\",\"reason\":\"exited\"}",
            "\"previous\":{\"fence\":0,\"holder\":{\"pid\":9,\"start\":\"9\"},\"liveness\":\"dead\",\"reason\":\"exited\",\"at\":\"2026-12-01T09:00:00.000Z\",\"renewedAt\":\"2026-12-01T09:30:00.000Z\"}",
            "\"ended\":\"x\"", "\"ended\":{\"how\":\"vanished\",\"at\":\"2026-12-01T10:00:00.000Z\",\"liveness\":\"dead\",\"reason\":\"exited\"}",
            "\"ended\":{\"how\":\"exited\",\"at\":\"2026-12-01T10:00:00.000Z\",\"liveness\":\"dead\",\"reason\":\"exited\",\"exitCode\":\"3\"}",
            "\"adoptedBy\":true"})
    void aFieldOfTheWrongTypeIsCorruptAndChangesNothing(String field) throws Exception {
        Identity holder = host.start(60, 50, "600");
        Lease lease = granted(store.acquire("build", holder));
        lease.release();
        String json = recordText().strip();
        String key = field.substring(0, field.indexOf(':'));
        String changed = json.contains(key + ":")
                ? json.replaceFirst(java.util.regex.Pattern.quote(key) + ":(\"[^\"]*\"|\\{[^}]*\\}|[0-9]+)",
                        java.util.regex.Matcher.quoteReplacement(field))
                : json.substring(0, json.length() - 1) + "," + field + "}";
        writeRecordText(changed);
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class);
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class)
                .isInstanceOf(LeaseException.class);
        assertThat(recordText()).isEqualTo(changed);
    }

    @Test
    void aRecordWrittenBeforeReservationsStillReads() throws Exception {
        Identity holder = host.start(60, 50, "600");
        writeRecordText("{\"name\":\"build\",\"fence\":4,\"state\":\"held\","
                + "\"holder\":{\"pid\":60,\"start\":\"600\",\"boot\":\"boot-1\",\"host\":\"here\",\"pidns\":\"4026531836\"},"
                + "\"writer\":{\"pid\":60,\"start\":\"600\"},\"acquiredAt\":\"2026-11-29T10:00:00.000Z\","
                + "\"renewedAt\":\"2026-11-29T10:00:00.000Z\",\"ttlMillis\":30000,\"previous\":{\"fence\":3,"
                + "\"holder\":{\"pid\":9,\"start\":\"9\"},\"liveness\":\"dead\",\"reason\":\"exited\",\"detail\":\"\","
                + "\"at\":\"2026-11-29T10:00:00.000Z\"}}\n");
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.tokenDigest()).isEmpty();
        assertThat(r.ended()).isEmpty();
        assertThat(r.previous().orElseThrow().renewedAt()).isEmpty();
        assertThat(((Acquisition.Granted) store.acquire("build", holder)).again()).isTrue();
    }
}
