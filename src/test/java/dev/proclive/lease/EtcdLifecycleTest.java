package dev.proclive.lease;

import dev.proclive.Eventually;
import dev.proclive.spi.internal.Descendants;
import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.lease.core.Pause;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every lifecycle rule of {@link LeaseLifecycleTest}, held by the store on etcd (an in-memory
 * {@link FakeEtcd}, on every OS): the same {@code LeaseRules}, whichever book holds the records.
 * Plus what only etcd has: the fence is the fence key's revision, a stale snapshot is never an
 * answer, an expired record frees the lease and never lowers a fence.
 */
class EtcdLifecycleTest extends LeaseLifecycleTest {

    static final String PREFIX = "test/";
    final FakeEtcd etcd = new FakeEtcd();

    @Override
    LeaseStore build(LeasePolicy policy, Pause pause) {
        try {
            return LeaseStore.builder().etcdClient(etcd).prefix(PREFIX).policy(policy).checker(LivenessChecker.of(host))
                    .clock(clock).pause(pause).descendants(Descendants.NONE).build();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    String recordText() {
        return new String(etcd.get(PREFIX + "build").orElseThrow().value(), StandardCharsets.UTF_8);
    }

    /** Written by hand: a fence in the text above the fence key's revision gets a fence key that high, as a grant would have. */
    @Override
    void writeRecordText(String text) {
        Matcher fence = Pattern.compile("\"fence\":([0-9]+)").matcher(text);
        if (fence.find()) {
            long f = Long.parseLong(fence.group(1));
            long fenceKey = etcd.get(PREFIX + "build.fence").map(dev.proclive.etcd.Etcd.KeyValue::modRevision).orElse(0L);
            if (f > fenceKey) {
                etcd.advanceTo(f - 1);
                etcd.put(PREFIX + "build.fence", "build");
            }
        }
        etcd.put(PREFIX + "build", text);
    }

    /** On etcd a fence is a revision: later than the one before, whatever else was written between. */
    @Override
    void assertNextFence(long fence, long previous) {
        assertThat(fence).isGreaterThan(previous);
    }

    @Override
    boolean recordExists() {
        return etcd.get(PREFIX + "build").isPresent();
    }

    @Override
    boolean endsDeadHolders() {
        return true;
    }

    @Override
    boolean waiterQueued() throws java.io.IOException {
        return !etcd.list(PREFIX + "build.queue/").isEmpty();
    }

    @Test
    void aGrantsFenceIsItsFenceKeysRevisionAndAnExpiredRecordNeverLowersIt() throws Exception {
        Identity holder = host.start(60, 50, "600");
        Lease first = ((Acquisition.Granted) store.acquire("build", holder)).lease();
        assertThat(first.fence()).isEqualTo(etcd.get(PREFIX + "build.fence").orElseThrow().modRevision());
        assertThat(recordText()).as("a grant's JSON carries 0: its revision was not known before it committed")
                .contains("\"fence\":0");
        assertThat(store.read("build").orElseThrow().fence()).isEqualTo(first.fence());
        etcd.expire(etcd.get(PREFIX + "build").orElseThrow().lease()); // nobody kept it alive
        assertThat(recordExists()).isFalse();
        Lease second = ((Acquisition.Granted) store.acquire("build", host.start(61, 50, "610"))).lease();
        assertThat(second.fence()).isGreaterThan(first.fence());
        assertThat(first.isValid()).isFalse();
    }

    /**
     * A record gone with its etcd lease leaves its queue standing: a caller that does not wait is refused while a
     * waiter that came first still waits (here a ticket put back by hand after its wait ended, its waiter alive).
     */
    @Test
    void anExpiredRecordStillServesItsQueueInOrder() throws Exception {
        Identity holder = host.start(60, 50, "600");
        store.acquire("build", holder);
        Identity waiter = host.start(61, 50, "610");
        java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
        java.util.List<dev.proclive.etcd.Etcd.KeyValue> tickets;
        try {
            java.util.concurrent.Future<Acquisition> waited = one.submit(
                    () -> store.acquire("build", waiter, java.time.Duration.ofMinutes(10)));
            Eventually.until("the waiter queued", java.time.Duration.ofSeconds(30), this::waiterQueued);
            tickets = etcd.list(PREFIX + "build.queue/");
            waited.cancel(true);
        } finally {
            one.shutdownNow();
        }
        Eventually.until("its ticket taken out", java.time.Duration.ofSeconds(30), () -> !waiterQueued());
        tickets.forEach(t -> etcd.put(t.key(), new String(t.value(), StandardCharsets.UTF_8))); // as if still waiting
        etcd.expire(etcd.get(PREFIX + "build").orElseThrow().lease());
        assertThat(recordExists()).isFalse();
        Acquisition jumped = store.acquire("build", host.start(62, 50, "620"));
        assertThat(jumped).as("the waiter came first").isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) jumped).verdict().detail()).contains("pid 61").contains("in the order they came");
        assertThat(((Acquisition.Held) jumped).verdict().detail()).startsWith("no record (it expired with its etcd lease)");
        assertThat(((Acquisition.Held) jumped).record().granted()).isFalse();
        assertThat(store.acquire("build", waiter)).as("its turn").isInstanceOf(Acquisition.Granted.class);
    }

    /**
     * On etcd a ticket lapses with its etcd lease, or its waiter's death: its time, by another process's clock, is not
     * held against this one's. A caller whose clock is an hour ahead does not drop the ticket of a waiter still there.
     */
    @Test
    void aCallerWhoseClockIsAheadKeepsAnotherProcesssTicket() throws Exception {
        Identity holder = host.start(60, 50, "600");
        store.acquire("build", holder);
        Identity waiter = host.start(61, 50, "610");
        Identity waiting = host.start(63, 50, "630"); // the process that waits, for the holder-to-be
        etcd.put(PREFIX + "build.queue/" + "0".repeat(32), dev.proclive.lease.book.LeaseJson.waiter(
                new dev.proclive.lease.book.LeaseBook.Waiter(waiter, waiting, clock.instant().plusSeconds(60))));
        store.release("build", store.read("build").orElseThrow().fence());
        clock.now = clock.now.plus(java.time.Duration.ofHours(1)); // this store's wall clock, not the waiter's
        Acquisition jumped = store.acquire("build", host.start(62, 50, "620"));
        assertThat(jumped).as("the waiter came first").isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) jumped).verdict().detail()).contains("pid 63 (for pid 61)");
        host.exit(waiting);
        assertThat(store.acquire("build", host.start(64, 50, "640"))).as("its waiter dead: its ticket goes")
                .isInstanceOf(Acquisition.Granted.class);
    }

    /**
     * A wait that a short outage ended, whose ticket could not be taken out either, leaves no ticket for long: the next
     * wait of another store of the JVM over the same prefix takes it out, though its etcd lease is kept alive by that
     * wait.
     */
    @Test
    void aTicketWhoseTakeOutFailedIsTakenOutAsTheStoreWaitsAgain() throws Exception {
        Identity holder = host.start(60, 50, "600");
        store.acquire("build", holder);
        store.acquire("other", holder);
        Identity waiter = host.start(61, 50, "610");
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            java.util.concurrent.Future<Acquisition> waited = two.submit(
                    () -> store.acquire("build", waiter, java.time.Duration.ofMinutes(10)));
            Eventually.until("the waiter queued", java.time.Duration.ofSeconds(30), this::waiterQueued);
            etcd.down = true; // the wait fails, and so does its ticket's take-out
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> waited.get(60, java.util.concurrent.TimeUnit.SECONDS))
                    .hasCauseInstanceOf(IOException.class);
            etcd.down = false;
            assertThat(waiterQueued()).as("its ticket stranded").isTrue();
            LeaseStore another = open(LeasePolicy.defaults(), pause); // whose wait keeps the JVM's ticket lease alive
            java.util.concurrent.Future<Acquisition> again = two.submit(
                    () -> another.acquire("other", waiter, java.time.Duration.ofMinutes(10)));
            Eventually.until("the stranded ticket taken out", java.time.Duration.ofSeconds(30), () -> !waiterQueued());
            again.cancel(true);
        } finally {
            etcd.down = false;
            two.shutdownNow();
        }
    }

    /** A ticket that stands, its waiter alive, put in by hand: {@code who} waits through {@code by}. */
    private void ticket(Identity who, Identity by) {
        etcd.put(PREFIX + "build.queue/" + "0".repeat(32), dev.proclive.lease.book.LeaseJson.waiter(
                new dev.proclive.lease.book.LeaseBook.Waiter(who, by, clock.instant().plusSeconds(60))));
    }

    /** A claim over a free lease is a newcomer's: its token reserves nothing, and a waiter that came first goes first. */
    @Test
    void aClaimOfAFreeLeaseDoesNotJumpTheQueue() throws Exception {
        Identity holder = host.start(60, 50, "600");
        store.acquire("build", holder);
        ticket(host.start(61, 50, "610"), host.start(63, 50, "630"));
        store.release("build", store.read("build").orElseThrow().fence());
        Identity claimer = host.start(62, 50, "620");
        host.tokens.put(62L, "0".repeat(32)); // it carries the token it claims with: one that reserves nothing here
        assertThat(store.claim("build", "0".repeat(32), claimer)).as("the waiter came first")
                .isInstanceOf(Acquisition.Held.class);
        etcd.expire(etcd.get(PREFIX + "build").orElseThrow().lease());
        assertThat(store.claim("build", "0".repeat(32), claimer)).as("so with no record")
                .isInstanceOf(Acquisition.Held.class);
    }

    /** Break clears the queue also where the record went with its etcd lease. */
    @Test
    void breakClearsTheQueueOfALeaseWhoseRecordExpired() throws Exception {
        Identity holder = host.start(60, 50, "600");
        store.acquire("build", holder);
        ticket(host.start(61, 50, "610"), host.start(63, 50, "630"));
        etcd.expire(etcd.get(PREFIX + "build").orElseThrow().lease());
        assertThat(store.acquire("build", host.start(62, 50, "620"))).isInstanceOf(Acquisition.Held.class);
        assertThat(store.breakLease("build")).as("no record to break").isEmpty();
        assertThat(waiterQueued()).as("its queue cleared").isFalse();
        assertThat(store.acquire("build", host.start(64, 50, "640"))).isInstanceOf(Acquisition.Granted.class);
    }

    @Test
    void anAnswerThatWritesNothingIsNeverGivenFromARememberedSnapshot() throws Exception {
        Identity holder = host.start(60, 50, "600");
        Lease lease = ((Acquisition.Granted) store.acquire("build", holder)).lease();
        Identity newcomer = host.start(61, 50, "610");
        assertThat(store.acquire("build", newcomer)).isInstanceOf(Acquisition.Held.class);
        // Released behind this store's back (another JVM): the remembered snapshot says held.
        LeaseStore other = open(LeasePolicy.defaults(), pause);
        assertThat(other.release("build", lease.fence())).isTrue();
        assertThat(store.acquire("build", newcomer)).isInstanceOf(Acquisition.Granted.class);
    }

    @Test
    void aReleaseAfterAGrantCostsOneTransactionEachAndTheGrantOneReadOfItsQueue() throws Exception {
        Identity holder = host.start(60, 50, "600");
        ((Acquisition.Granted) store.acquire("build", holder)).lease().release(); // the snapshot and this JVM's etcd lease
        int before = etcd.calls;
        Lease lease = ((Acquisition.Granted) store.acquire("build", holder)).lease();
        assertThat(lease.release()).isTrue();
        assertThat(etcd.calls - before).as("grant and release, and the waiters a grant is served after").isEqualTo(3);
    }

    /**
     * A waiting acquire over a free lease is granted by its first question: it is a new grant, with
     * no previous record, written once (the record's revision is the fence's), never asked again
     * and answered as this holder's grant "again" with itself as the previous one.
     */
    @Test
    void aWaitingAcquireOverAFreeLeaseIsOneNewGrantNotAnAgain() throws Exception {
        Identity holder = host.start(60, 50, "600");
        Acquisition a = store.acquire("build", holder, java.time.Duration.ofSeconds(30));
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        Acquisition.Granted granted = (Acquisition.Granted) a;
        assertThat(granted.again()).as("a new grant").isFalse();
        assertThat(granted.previous()).as("nothing was there before it").isEmpty();
        assertThat(etcd.get(PREFIX + "build").orElseThrow().modRevision()).as("the record written once: by the grant")
                .isEqualTo(etcd.get(PREFIX + "build.fence").orElseThrow().modRevision());
        assertThat(granted.lease().release()).isTrue();
    }

    /**
     * A record is not rewritten to stay alive: the keep-alive of the etcd lease it is on (the
     * store's session) is its renewal. Over more than its TTL of keep-alive rounds, and with the
     * store's clock far past the record's {@code renewedAt}, nothing is written and the grant is
     * not lost.
     */
    @Test
    void aKeptGrantIsNotRewrittenToStayAliveAndIsNotLostForIt() throws Exception {
        try (LeaseStore brief = LeaseStore.builder().etcdClient(etcd).prefix("kept/")
                .policy(LeasePolicy.builder().ttl(java.time.Duration.ofSeconds(3)).build()).checker(LivenessChecker.of(host))
                .clock(clock).pause(pause).descendants(Descendants.NONE).build()) {
            Lease lease = ((Acquisition.Granted) brief.acquire("build", host.start(60, 50, "600"))).lease();
            int puts = etcd.puts.get();
            int keepAlives = etcd.keepAlives.get();
            Eventually.until("more than a TTL of keep-alive rounds (one a third of it)", java.time.Duration.ofSeconds(60),
                    () -> etcd.keepAlives.get() >= keepAlives + 4);
            clock.now = clock.now.plus(java.time.Duration.ofMinutes(10)); // long past what its renewedAt promised
            assertThat(etcd.puts.get()).as("nothing written to keep it alive").isEqualTo(puts);
            assertThat(lease.knownLost()).isFalse();
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.release()).isTrue();
        }
    }

    /**
     * On etcd a record lives as long as its holder's session (the etcd lease it is attached to),
     * and is not rewritten to stay alive: a newcomer that takes an UNKNOWN holder's lease after its
     * TTL takes it once that session has expired (and the record with it), however long ago its
     * {@code renewedAt} is, and never while the session lives.
     */
    @Override
    @Test
    void anUnknownHoldersLeaseIsTakenAfterTheTtlItPromisedWithoutSleeping() throws Exception {
        LeaseStore remote = open(LeasePolicy.builder().ttl(java.time.Duration.ofMinutes(2)).build(), pause);
        ((Acquisition.Granted) remote.acquire("build", host.start(60, 50, "600"))).lease();
        writeRecordText(recordText().replace("\"host\":\"here\"", "\"host\":\"another-host\""));
        long session = etcd.get(PREFIX + "build").orElseThrow().lease();

        LeaseStore lenient = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build(), pause);
        Identity taker = host.start(61, 50, "610");
        clock.now = clock.now.plus(java.time.Duration.ofHours(1)); // an hour past what its renewedAt promised
        Acquisition early = lenient.acquire("build", taker);
        assertThat(early).as("its session lives").isInstanceOf(Acquisition.Undecided.class);
        assertThat(((Acquisition.Undecided) early).eligibleAt()).as("when the session expires, as etcd says")
                .hasValueSatisfying(at -> assertThat(at).isAfter(clock.now).isBeforeOrEqualTo(clock.now.plusSeconds(121)));
        assertThat(recordExists()).isTrue();

        etcd.expire(session); // nobody keeps the session alive any more: the record goes with it
        Acquisition late = lenient.acquire("build", taker);
        assertThat(late).isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) late).lease().fence()).isGreaterThan(session == 0 ? 0 : 1);
    }

    /**
     * A waiting newcomer over an UNKNOWN holder's record is granted once the holder's session
     * expires (told by the store's watch), not by the record's {@code renewedAt}; without sleeping.
     */
    @Override
    @Test
    void anUndecidedLeaseIsWaitedForUntilItsEligibleAtByTheStoresClockWithoutSleeping() throws Exception {
        LeaseStore remote = open(LeasePolicy.builder().ttl(java.time.Duration.ofMinutes(2)).build(), pause);
        ((Acquisition.Granted) remote.acquire("build", host.start(60, 50, "600"))).lease();
        writeRecordText(recordText().replace("\"host\":\"here\"", "\"host\":\"another-host\""));
        long session = etcd.get(PREFIX + "build").orElseThrow().lease();
        java.util.concurrent.atomic.AtomicInteger naps = new java.util.concurrent.atomic.AtomicInteger();
        Pause expiring = new Pause() { // the session expires while the newcomer waits
            @Override
            public void await(java.util.concurrent.CompletableFuture<?> end, java.time.Duration most) throws InterruptedException {
                nap(most);
            }

            @Override
            public void sleep(java.time.Duration d) {
                nap(d);
            }

            private void nap(java.time.Duration d) {
                pauses.add(d);
                clock.advance(d);
                if (naps.incrementAndGet() == 3) {
                    etcd.expire(session);
                }
            }
        };
        LeaseStore lenient = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build(), expiring);
        long before = System.nanoTime();
        Acquisition a = lenient.acquire("build", host.start(61, 50, "610"), java.time.Duration.ofMinutes(5));
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(naps.get()).as("granted once the session expired").isGreaterThanOrEqualTo(3);
        assertThat(pauses).allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(java.time.Duration.ofSeconds(2)));
        assertThat((System.nanoTime() - before) / 1_000_000).as("waited without sleeping").isLessThan(5_000);
    }

    /**
     * One watch stream over the store's prefix tells every kept grant of a change of its record:
     * many grants kept, one stream opened; a record taken behind the store's back is known lost
     * through it.
     */
    @Test
    void oneWatchStreamServesEveryKeptGrant() throws Exception {
        java.util.List<Lease> leases = new java.util.ArrayList<>();
        int before = etcd.watchStreams.get();
        for (int i = 0; i < 50; i++) {
            leases.add(((Acquisition.Granted) store.acquire("build-" + i, host.start(100 + i, 50, "10" + i))).lease());
        }
        Lease last = leases.get(leases.size() - 1);
        LeaseStore other = open(LeasePolicy.defaults(), pause); // another JVM's store
        assertThat(other.breakLease("build-7")).isPresent();
        Eventually.until("the broken grant is known lost", java.time.Duration.ofSeconds(30), () -> leases.get(7).knownLost());
        assertThat(etcd.watchStreams.get() - before).as("one stream for all 50 grants of this store").isEqualTo(1);
        assertThat(last.isValid()).isTrue();
        leases.forEach(l -> {
            try {
                l.release();
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    /**
     * A watch stream that breaks is opened again (from the revision each grant last read), and the
     * kept grants are told of changes through it as before.
     */
    @Test
    void aBrokenWatchStreamIsOpenedAgainAndStillTellsEveryKeptGrant() throws Exception {
        java.util.List<Lease> leases = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            leases.add(((Acquisition.Granted) store.acquire("build-" + i, host.start(100 + i, 50, "10" + i))).lease());
        }
        int opened = etcd.watchStreams.get();
        etcd.breakWatches();
        Eventually.until("the stream opened again", java.time.Duration.ofSeconds(30), () -> etcd.watchStreams.get() > opened);
        LeaseStore other = open(LeasePolicy.defaults(), pause); // another JVM's store
        assertThat(other.breakLease("build-3")).isPresent();
        Eventually.until("the broken grant is known lost", java.time.Duration.ofSeconds(30), () -> leases.get(3).knownLost());
        assertThat(leases.get(4).isValid()).isTrue();
    }

    @Test
    void aNameThatWouldBeAnotherLeasesFenceKeyIsRefusedTouchingNothing() {
        Identity holder = host.start(60, 50, "600");
        int before = etcd.calls;
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.acquire("build.fence", holder))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'.fence'");
        assertThat(etcd.calls).isEqualTo(before);
    }

    @Test
    void aRecordAboveItsFenceKeyIsCorruptAndChangesNothing() throws Exception {
        Identity holder = host.start(60, 50, "600");
        ((Acquisition.Granted) store.acquire("build", holder)).lease().release();
        String hand = recordText().replaceFirst("\"fence\":[0-9]+", "\"fence\":999");
        etcd.put(PREFIX + "build", hand);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.read("build"))
                .isInstanceOf(LeaseCorruptException.class).hasMessageContaining("fence key");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.acquire("build", holder))
                .isInstanceOf(LeaseCorruptException.class);
        assertThat(recordText()).isEqualTo(hand);
    }

    @Test
    void theKeepAliveThreadEndsWhenNothingIsKeptAndItsOwnEtcdLeaseIsRevoked() throws Exception {
        LeaseStore brief = LeaseStore.builder().etcdClient(etcd).prefix("brief/").policy(LeasePolicy.builder().ttl(java.time.Duration.ofSeconds(1)).build()).checker(LivenessChecker.of(host)).clock(clock).pause(pause).descendants(Descendants.NONE).build();
        Lease lease = ((Acquisition.Granted) brief.acquire("build", host.start(60, 50, "600"))).lease();
        long own = etcd.get("brief/build").orElseThrow().lease();
        assertThat(keepAliveThreads("brief/")).isEqualTo(1);
        assertThat(lease.release()).isTrue();
        Eventually.until("a store with nothing to keep holds no thread", java.time.Duration.ofSeconds(10),
                () -> keepAliveThreads("brief/") == 0);
        assertThat(etcd.keepAlive(own)).as("its idle etcd lease was revoked").isZero();
        ((Acquisition.Granted) brief.acquire("build", host.start(61, 50, "610"))).lease().release();
        assertThat(brief.read("build")).get().satisfies(r -> assertThat(r.granted()).isFalse());
    }

    @Test
    void theKeeperEndsAGrantWhoseHolderIsDeadHereAndOneWhoseHolderDiesWhileKept() throws Exception {
        Identity gone = host.start(60, 50, "600");
        Identity alive = host.start(61, 50, "610");
        assertThat(store.acquire("gone", gone)).isInstanceOf(Acquisition.Granted.class);
        assertThat(store.acquire("alive", alive)).isInstanceOf(Acquisition.Granted.class);
        host.exit(gone); // died before the keeper started: found DEAD
        store.close(); // the JVM that took them (a hook's) is gone: only the keeper keeps them
        LeaseStore keeper = open(LeasePolicy.defaults(), pause);
        Thread keeping = new Thread(() -> {
            try {
                keeper.keepHolders(java.time.Duration.ofMillis(20), line -> { });
            } catch (InterruptedException e) {
                // stopped
            }
        });
        keeping.start();
        try {
            assertThat(endedWithin(keeper, "gone").how()).isEqualTo(LeaseChange.EXITED);
            assertThat(keeper.read("alive").orElseThrow().granted()).as("a live holder's grant is kept").isTrue();
            host.exit(alive); // dies while kept: ended through the exit watch
            LeaseRecord.Ending end = endedWithin(keeper, "alive");
            assertThat(end.verdict().liveness()).isEqualTo(dev.proclive.Liveness.DEAD);
        } finally {
            keeping.interrupt();
            keeping.join(10_000);
        }
    }

    /** The ending of lease {@code name}, within 3 s (a keep-alive round, a third of the 30 s TTL, is longer). */
    private static LeaseRecord.Ending endedWithin(LeaseStore store, String name) throws Exception {
        return Eventually.until("lease " + name + " ended", java.time.Duration.ofSeconds(3),
                () -> store.read(name).orElseThrow().ended(), java.util.Optional::isPresent).orElseThrow();
    }

    /**
     * A removed record is remembered at the delete's revision, as every write is. Remembered at the
     * revision of the read before it, a read answered before the delete on another thread (a watch's)
     * and remembered after it took the removal's place, and the next call through the store found
     * the corrupt record it had just broken (seen as {@code break}, then an acquire refused as corrupt).
     */
    @Test
    void aReadAnsweredBeforeARemovalNeverTakesItsPlace() throws Exception {
        java.util.concurrent.CountDownLatch answered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean holdNext = new java.util.concurrent.atomic.AtomicBoolean();
        dev.proclive.etcd.Etcd slow = (dev.proclive.etcd.Etcd) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {dev.proclive.etcd.Etcd.class}, (p, m, a) -> {
                    Object answer;
                    try {
                        answer = m.invoke(etcd, a);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if (m.getName().equals("txn") && holdNext.compareAndSet(true, false)) {
                        answered.countDown(); // answered now, handed back once the test lets it
                        release.await();
                    }
                    return answer;
                });
        dev.proclive.lease.etcd.EtcdBook book = new dev.proclive.lease.etcd.EtcdBook(slow, "removed/", clock);
        java.util.concurrent.ExecutorService other = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            etcd.put("removed/build.fence", "build");
            etcd.put("removed/build", "this is not a lease record");
            holdNext.set(true);
            java.util.concurrent.Future<?> stale = other.submit(() -> {
                try {
                    return book.read("build");
                } catch (LeaseCorruptException expected) {
                    return null;
                }
            });
            assertThat(answered.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            book.locked("build", guard -> {
                guard.remove(); // as break removes a corrupt record
                return null;
            });
            release.countDown();
            stale.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(book.locked("build", dev.proclive.lease.book.LeaseBook.Guard::record))
                    .as("the removal stands").isEmpty();
        } finally {
            release.countDown();
            other.shutdownNow();
            book.close();
        }
    }

    /**
     * The thread that reads a record its watch said changed ends once nothing is left to read, as
     * the look's does: a store whose grants sit still holds no thread for them.
     */
    @Test
    void theThreadThatReadsChangedRecordsEndsOnceNothingIsLeftToRead() throws Exception {
        Lease lease = ((Acquisition.Granted) store.acquire("build", host.start(60, 50, "600"))).lease();
        etcd.put(PREFIX + "build", recordText().replaceFirst("\"pid\":[0-9]+", "\"pid\":424242")); // another holder
        LeaseLost lost = lease.lost().get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(lost.record()).as("read from etcd: %s", lost).isPresent();
        Eventually.until("no thread left reading", java.time.Duration.ofSeconds(10),
                () -> Thread.getAllStackTraces().keySet().stream()
                        .noneMatch(t -> t.isAlive() && t.getName().equals("proclive-lease-read")));
    }

    private static long keepAliveThreads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("proclive-etcd-keepalive " + prefix)).count();
    }

    @Test
    void noMemberAnsweringIsAnIoErrorNeverAGrant() {
        Identity holder = host.start(60, 50, "600");
        etcd.down = true;
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(IOException.class);
    }
}
