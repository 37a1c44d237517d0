package dev.proclive.lease;

import dev.proclive.lease.core.Pause;

import dev.proclive.Eventually;
import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.etcd.Etcd;
import dev.proclive.etcd.EtcdGateway;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/** The lease store on one real etcd member: the same rules as on files, fences from revisions, real processes as holders. */
@EnabledOnOs(OS.LINUX)
class EtcdLeaseIT {

    @TempDir
    static Path dir;
    static EtcdCluster etcd;
    static int prefixes;
    final Children children = new Children();
    String prefix;

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = EtcdCluster.start(dir, 1);
    }

    @AfterAll
    static void stopEtcd() throws Exception {
        if (etcd != null) {
            etcd.close();
        }
    }

    @AfterEach
    void killChildren() throws InterruptedException {
        children.killAll();
    }

    private LeaseStore store(Duration ttl) throws IOException {
        return store(LeasePolicy.builder().ttl(ttl).build());
    }

    /** A store over this test's prefix (one per test) with {@code policy}. */
    private LeaseStore store(LeasePolicy policy) throws IOException {
        return builder(policy).build();
    }

    /** A store's builder over this test's prefix (one per test) with {@code policy}. */
    private LeaseStore.Builder builder(LeasePolicy policy) {
        if (prefix == null) {
            prefix = "test" + (++prefixes) + "/";
        }
        return LeaseStore.builder().etcd(etcd.endpoints()).prefix(prefix).policy(policy);
    }


    @Test
    void aWaitingAcquireOverAFreeLeaseIsOneNewGrant() throws Exception {
        try (LeaseStore store = store(Duration.ofSeconds(30)); Etcd raw = raw()) {
            Acquisition a = store.acquire("build", ProcLive.current().orElseThrow(), Duration.ofSeconds(30));
            assertThat(a).isInstanceOf(Acquisition.Granted.class);
            assertThat(((Acquisition.Granted) a).again()).as("a new grant, not this holder's again").isFalse();
            assertThat(((Acquisition.Granted) a).previous()).isEmpty();
            long record = raw.list(prefix + "build").stream().filter(kv -> kv.key().equals(prefix + "build"))
                    .findFirst().orElseThrow().modRevision();
            assertThat(record).as("written once, by the grant").isEqualTo(((Acquisition.Granted) a).lease().fence());
            assertThat(((Acquisition.Granted) a).lease().release()).isTrue();
        }
    }

    private Etcd raw() throws IOException {
        return EtcdGateway.open(etcd.endpoints(), Optional.empty(), Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper());
    }

    /** What ends a wait in {@link #grantedAfter}: a kill, a release. */
    interface Event {
        void happen() throws Exception;
    }

    /**
     * A store whose waits for a live holder end only when what they wait on happens (a record's
     * watch, a holder's exit), never at a poll's deadline: a waiter granted through it was woken by
     * the event, however slow this machine is. A short look again (under a second: a free lease with
     * another waiter's turn first, a DEAD holder not proven yet) is kept: it is no poll of a holder.
     */
    private LeaseStore noPolls() throws IOException {
        return builder(LeasePolicy.builder().ttl(Duration.ofSeconds(30)).build()).pause(new Pause() {
            @Override
            public void await(java.util.concurrent.CompletableFuture<?> end, Duration most) throws InterruptedException {
                if (most.compareTo(Duration.ofSeconds(1)) < 0) {
                    Pause.REAL.await(end, most);
                    return;
                }
                try {
                    end.get(5, TimeUnit.MINUTES); // not at most: no poll
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    // a watch that broke: the waiter judges again, as it does with real pauses
                }
            }

            @Override
            public void sleep(Duration d) throws InterruptedException {
                Pause.REAL.sleep(d);
            }
        }).build();
    }

    /**
     * Starts {@code waiting} on another thread, waits until it is queued for lease {@code build},
     * then makes {@code event} happen: the wait is granted, and this is how many milliseconds after
     * the event.
     */
    private long grantedAfter(java.util.concurrent.Callable<Acquisition> waiting, Event event) throws Exception {
        Thread[] waiter = {null};
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> waiter[0] = new Thread(r, "waiter"));
        try (Etcd queue = raw()) {
            Future<Acquisition> answer = pool.submit(waiting);
            Eventually.until("the waiter is queued", Duration.ofSeconds(10),
                    () -> !queue.list(prefix + "build.queue/").isEmpty() || answer.isDone());
            long at = System.nanoTime();
            event.happen();
            Acquisition a;
            try {
                a = answer.get(20, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException notWoken) {
                // what the waiter was doing, and what etcd held, for whoever reads the failure
                StringBuilder where = new StringBuilder("not granted within 20 s of the event; the waiter was at:");
                for (StackTraceElement e : waiter[0].getStackTrace()) {
                    where.append("\n  ").append(e);
                }
                for (Etcd.KeyValue kv : queue.list(prefix + "build")) {
                    where.append("\n").append(kv.key()).append(" @").append(kv.modRevision()).append(": ")
                            .append(new String(kv.value(), java.nio.charset.StandardCharsets.UTF_8));
                }
                throw new AssertionError(where.toString(), notWoken);
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - at);
            assertThat(a).isInstanceOf(Acquisition.Granted.class);
            return ms;
        } finally {
            pool.shutdown();
        }
    }

    /** The mod_revision of a key, 0 when it is absent. */
    private long modRevision(String key) throws IOException {
        return raw().txn(List.of(), List.of(new Etcd.Get(key))).reads().get(0).map(Etcd.KeyValue::modRevision).orElse(0L);
    }

    @Test
    void aGrantsFenceIsTheRevisionOfItsFenceKeyAndOnlyGrows() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Identity a = children.sleeping();
        Lease first = ((Acquisition.Granted) store.acquire("build", a)).lease();
        assertThat(first.fence()).isEqualTo(modRevision(prefix + "build.fence")).isPositive();
        assertThat(store.read("build")).get().extracting(LeaseRecord::fence).isEqualTo(first.fence());
        Acquisition again = store.acquire("build", a);
        assertThat(again).isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) again).again()).isTrue();
        assertThat(((Acquisition.Granted) again).lease().fence()).isEqualTo(first.fence());
        LeaseRecord renewed = first.renew();
        assertThat(renewed.fence()).isEqualTo(first.fence());
        assertThat(first.release()).isTrue();
        assertThat(store.read("build")).get().satisfies(r -> assertThat(r.granted()).isFalse());

        // The record deleted by hand: the fence key is not, so the next fence is higher still.
        deleteKey(prefix + "build");
        Lease second = ((Acquisition.Granted) store.acquire("build", children.sleeping())).lease();
        assertThat(second.fence()).isGreaterThan(first.fence()).isEqualTo(modRevision(prefix + "build.fence"));
    }

    private void deleteKey(String key) throws Exception {
        java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                        etcd.endpoints().get(0).resolve("/v3/kv/deleterange"))
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"key\":\""
                        + java.util.Base64.getEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8)) + "\"}")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void anAliveHolderKeepsItAndADeadOneIsTakenOverAtOnce() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Process p = children.start("sleep", "120");
        Identity holder = ProcLive.identify(p.pid()).orElseThrow();
        // The grant is taken by another store (a hook's JVM, gone after): a store that took it
        // watches its holder and ends it itself the moment it dies; here the newcomer takes it over.
        LeaseStore hook = store(Duration.ofSeconds(30));
        Lease held = ((Acquisition.Granted) hook.acquire("build", holder)).lease();
        hook.close();
        Identity newcomer = children.sleeping();
        assertThat(store.acquire("build", newcomer)).isInstanceOf(Acquisition.Held.class);
        p.destroyForcibly().waitFor();
        Acquisition a = store.acquire("build", newcomer);
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        Lease taken = ((Acquisition.Granted) a).lease();
        assertThat(taken.fence()).isGreaterThan(held.fence());
        assertThat(taken.record().previous()).get().satisfies(t -> {
            assertThat(t.fence()).isEqualTo(held.fence());
            assertThat(t.verdict().liveness()).isEqualTo(Liveness.DEAD);
        });
        assertThat(held.isValid()).isFalse();
        assertThatThrownBy(held::renew).isInstanceOf(LeaseLostException.class);
    }

    @Test
    void aWatchedHoldersEndIsKeptInTheRecordKilledOrExited() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.proclive.Kernel.tellsExitStatus(), dev.proclive.Kernel.NO_EXIT_STATUS);
        LeaseStore store = store(Duration.ofSeconds(30));
        Process killed = children.start("sleep", "120");
        Process exits = children.start("sh", "-c", "read line; exit 3");
        ((Acquisition.Granted) store.acquire("killed", ProcLive.identify(killed.pid()).orElseThrow())).lease();
        ((Acquisition.Granted) store.acquire("exits", ProcLive.identify(exits.pid()).orElseThrow())).lease();
        killed.destroyForcibly();
        exits.getOutputStream().close(); // read ends: exit 3
        for (String name : List.of("killed", "exits")) {
            Eventually.until(name + " ended", Duration.ofSeconds(30), () -> !store.read(name).map(LeaseRecord::granted).orElse(true));
        }
        LeaseRecord.Ending byKill = store.read("killed").orElseThrow().ended().orElseThrow();
        assertThat(byKill.verdict().detail()).as("%s", byKill).contains("its holder killed by SIGKILL");
        assertThat(byKill.exitCode()).isEmpty();
        LeaseRecord.Ending byExit = store.read("exits").orElseThrow().ended().orElseThrow();
        assertThat(byExit.exitCode()).as("%s", byExit).hasValue(3);
        assertThat(byExit.verdict().detail()).contains("its holder exited with status 3");
    }

    @Test
    void aRecordNobodyKeepsAliveExpiresAndTheNextFenceIsHigher() throws Exception {
        Identity holder = children.sleeping();
        LeaseStore first = store(Duration.ofSeconds(1));
        Lease gone = ((Acquisition.Granted) first.acquire("build", holder)).lease();
        first.close(); // this JVM stops keeping it alive, as an exited one would
        Acquisition meanwhile = store(Duration.ofSeconds(1)).acquire("build", children.sleeping());
        assertThat(meanwhile).isInstanceOf(Acquisition.Held.class);
        LeaseStore reader = store(Duration.ofSeconds(1));
        Eventually.until("the record expired", Duration.ofSeconds(10), () -> reader.read("build").isEmpty());
        Lease next = ((Acquisition.Granted) store(Duration.ofSeconds(30)).acquire("build", children.sleeping())).lease();
        assertThat(next.fence()).isGreaterThan(gone.fence());
    }

    @Test
    void aGrantKeptAliveByItsJvmOutlivesItsTtl() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(2));
        Lease kept = ((Acquisition.Granted) store.acquire("build", children.sleeping())).lease();
        long since = System.nanoTime();
        Eventually.until("seven seconds after its grant (its TTL three times over), no renew() called",
                Duration.ofSeconds(40), () -> store.read("build"), r -> r.isEmpty() || r.get().fence() != kept.fence()
                        || System.nanoTime() - since > Duration.ofSeconds(7).toNanos());
        assertThat(kept.isValid()).isTrue();
        assertThat(kept.lost()).isNotDone();
        assertThat(store.read("build")).get().as("kept by its session's keep-alive, the record not rewritten")
                .satisfies(r -> assertThat(r.fence()).isEqualTo(kept.fence()))
                .satisfies(r -> assertThat(r.renewedAt()).isEqualTo(kept.record().renewedAt()));
    }

    @Test
    void afterLeaseBreakItsLostCompletesWithinASecondSayingBroken() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Lease lease = ((Acquisition.Granted) store.acquire("build", children.sleeping())).lease();
        Cli.Result broke = Cli.run("lease", "break", "build", "--etcd",
                etcd.endpoints().get(0).toString(), "--prefix", prefix);
        long broken = System.nanoTime();
        assertThat(broke.exit()).as(broke.toString()).isZero();
        LeaseLost lost = lease.lost().get(30, java.util.concurrent.TimeUnit.SECONDS);
        long after = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - broken);
        assertThat(lost.why()).isEqualTo(LeaseChange.BROKEN);
        assertThat(after).as("known %d ms after the break's process ended", after).isLessThanOrEqualTo(1_000);
        org.assertj.core.api.Assertions.assertThatThrownBy(lease::ensureValid).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("broken");
    }

    @Test
    void aListenerSeesAnotherProcessGrantedThenReleased() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Identity holder = children.sleeping();
        java.util.concurrent.BlockingQueue<LeaseEvent> events = new java.util.concurrent.LinkedBlockingQueue<>();
        try (AutoCloseable watch = store.watch("build", events::add)) {
            String at = etcd.endpoints().get(0).toString();
            Cli.Result granted = Cli.run("lease", "acquire", "build", "--etcd", at, "--prefix",
                    prefix, "--holder", Long.toString(holder.pid()), "--print", "fence");
            assertThat(granted.exit()).as(granted.toString()).isZero();
            long fence = Long.parseLong(granted.out().strip());
            Cli.Result released = Cli.run("lease", "release", "build", "--etcd", at, "--prefix",
                    prefix, "--fence", Long.toString(fence));
            assertThat(released.exit()).as(released.toString()).isZero();
            LeaseEvent first = events.poll(10, java.util.concurrent.TimeUnit.SECONDS);
            LeaseEvent second = events.poll(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(first).isNotNull().extracting(LeaseEvent::kind).isEqualTo(LeaseChange.GRANTED);
            assertThat(first.record().fence()).isEqualTo(fence);
            assertThat(second).isNotNull().extracting(LeaseEvent::kind).isEqualTo(LeaseChange.RELEASED);
            assertThat(second.record().fence()).isEqualTo(fence);
        }
    }

    @Test
    void ofEightRacersForAFreeLeaseExactlyOneWins() throws Exception {
        List<Identity> racers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            racers.add(children.sleeping());
        }
        for (int round = 0; round < 5; round++) {
            String name = "race" + round;
            CountDownLatch go = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<Acquisition>> answers = new ArrayList<>();
            for (Identity r : racers) {
                LeaseStore own = store(Duration.ofSeconds(30));
                answers.add(pool.submit((Callable<Acquisition>) () -> {
                    go.await();
                    return own.acquire(name, r);
                }));
            }
            go.countDown();
            int granted = 0;
            for (Future<Acquisition> f : answers) {
                Acquisition a = f.get(30, TimeUnit.SECONDS);
                assertThat(a).isInstanceOfAny(Acquisition.Granted.class, Acquisition.Held.class);
                granted += a instanceof Acquisition.Granted ? 1 : 0;
            }
            pool.shutdown();
            assertThat(granted).as("round %d", round).isEqualTo(1);
        }
    }

    /** A sleeper this test ends, granted lease build through {@code store}. */
    private Process heldByASleeper(LeaseStore store) throws Exception {
        Process p = children.start("sleep", "120");
        assertThat(store.acquire("build", ProcLive.identify(p.pid()).orElseThrow())).isInstanceOf(Acquisition.Granted.class);
        return p;
    }

    /** Another store's prefix may lie below a lease's queue: that lease's waiters never take its keys for tickets. */
    @Test
    void aStoreWhosePrefixLiesBelowALeasesQueueKeepsItsRecords() throws Exception {
        try (LeaseStore outer = store(Duration.ofSeconds(30));
             LeaseStore inner = LeaseStore.builder().etcd(etcd.endpoints()).prefix(prefix + "build.queue/")
                     .policy(LeasePolicy.builder().ttl(Duration.ofSeconds(30)).build()).build()) {
            String shapedAsATicket = "0123456789abcdef0123456789abcdef"; // its record's key is one a ticket could have
            Lease held = ((Acquisition.Granted) inner.acquire("build", children.sleeping())).lease();
            Lease shaped = ((Acquisition.Granted) inner.acquire(shapedAsATicket, children.sleeping())).lease();
            heldByASleeper(outer);
            assertThat(outer.acquire("build", children.sleeping(), Duration.ofSeconds(1)))
                    .as("queued and gave up: the queue written twice").isInstanceOf(Acquisition.Held.class);
            for (Lease lease : List.of(held, shaped)) {
                assertThat(inner.read(lease.name())).as("the inner store's record of %s", lease.name())
                        .hasValueSatisfying(r -> assertThat(r.granted() && r.fence() == lease.fence()).isTrue());
                assertThat(inner.acquire(lease.name(), children.sleeping())).as("its holder still holds it")
                        .isInstanceOf(Acquisition.Held.class);
            }
        }
    }

    @Test
    void aWaiterIsGrantedTheMomentTheHolderIsKilled() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Process p = heldByASleeper(store);
        Identity waiter = children.sleeping();
        LeaseStore waiting = noPolls();
        long ms = grantedAfter(() -> waiting.acquire("build", waiter, Duration.ofSeconds(20)), p::destroyForcibly);
        assertThat(ms).as("granted %d ms after the kill, woken by it (no poll)", ms)
                .isLessThan(Eventually.scaled(Duration.ofSeconds(2)).toMillis());
    }

    /**
     * A wait ended by an interrupt takes its ticket out, though another wait of the same store keeps
     * the store's ticket lease alive: else the free lease stays the queue's until the ended wait's
     * deadline.
     */
    @Test
    void aWaiterInterruptedBesideAnotherWaitLeavesNoTicket() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Process holder = heldByASleeper(store);
        store.acquire("other", children.sleeping());
        LeaseStore waiting = store(Duration.ofSeconds(30));
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            Future<Acquisition> stillWaiting = two.submit(() -> waiting.acquire("other", children.sleeping(), Duration.ofMinutes(2)));
            Identity ended = children.sleeping();
            Future<Acquisition> interrupted = two.submit(() -> waiting.acquire("build", ended, Duration.ofMinutes(2)));
            Etcd raw = raw();
            String queue = prefix + "build.queue/";
            Eventually.until("the waiter's ticket", Duration.ofSeconds(30), () -> raw.list(queue),
                    tickets -> tickets.size() == 1);
            interrupted.cancel(true);
            Eventually.until("the ticket taken out", Duration.ofSeconds(30), () -> raw.list(queue), List::isEmpty);
            holder.destroyForcibly();
            assertThat(holder.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(store.acquire("build", children.sleeping())).as("nobody is ahead").isInstanceOf(Acquisition.Granted.class);
            assertThat(stillWaiting.isDone()).as("the other wait goes on").isFalse();
        } finally {
            two.shutdownNow();
            waiting.close();
        }
    }

    /**
     * Two waits of one store for the same holder-to-be share its ticket, which lives as long as the
     * longer of them: the shorter one's deadline passing lets no later caller in ahead of the other.
     */
    @Test
    void aSharedTicketLastsAsLongAsItsLongestWait() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Process holder = heldByASleeper(store);
        Identity waiter = children.sleeping();
        java.util.concurrent.ExecutorService three = java.util.concurrent.Executors.newFixedThreadPool(3);
        try (LeaseStore elsewhere = store(Duration.ofSeconds(30))) {
            Etcd raw = raw();
            String queue = prefix + "build.queue/";
            Future<Acquisition> shorter = three.submit(() -> store.acquire("build", waiter, Duration.ofSeconds(2)));
            Eventually.until("the waiter's ticket", Duration.ofSeconds(30), () -> raw.list(queue), t -> t.size() == 1);
            Future<Acquisition> longer = Eventually.submittedInside(three, "waitInQueue", // the longer wait in the queue
                    () -> store.acquire("build", waiter, Duration.ofMinutes(2)));
            Future<Acquisition> later = three.submit(() -> elsewhere.acquire("build", children.sleeping(), Duration.ofMinutes(2)));
            Eventually.until("the later caller's ticket", Duration.ofSeconds(30), () -> raw.list(queue), t -> t.size() == 2);
            assertThat(shorter.get(30, TimeUnit.SECONDS)).as("the shorter wait ends at its deadline").isInstanceOf(Acquisition.Held.class);
            holder.destroyForcibly();
            assertThat(longer.get(Eventually.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("served before the later caller").isInstanceOf(Acquisition.Granted.class);
            later.cancel(true);
        } finally {
            three.shutdownNow();
        }
    }

    /**
     * Two stores of one JVM over one cluster spelled two ways (127.0.0.1 and localhost) are one place: they share the
     * ticket of waits for the same holder-to-be, and the end of one wait does not take it out under the other.
     */
    @Test
    void twoStoresOverOneClusterSpelledTwoWaysShareTheirTicket() throws Exception {
        List<java.net.URI> spelled = etcd.endpoints().stream()
                .map(u -> java.net.URI.create(u.toString().replace("127.0.0.1", "localhost"))).toList();
        assertThat(spelled).as("the cluster's endpoints spelled otherwise").isNotEqualTo(etcd.endpoints());
        LeaseStore store = store(Duration.ofSeconds(30));
        try (LeaseStore second = LeaseStore.builder().etcd(spelled).prefix(prefix)
                .policy(LeasePolicy.builder().ttl(Duration.ofSeconds(30)).build()).build()) {
            assertASharedTicketOutlivesTheWaitThatSetItLast(store, second);
        }
    }

    /**
     * Two stores of one JVM share the ticket of waits for the same holder-to-be; the second, waiting
     * longer, sets its time last. Its wait ends: the ticket lives on while the first's goes on.
     */
    @Test
    void aTicketTwoStoresShareOutlivesTheWaitThatSetItLast() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        try (LeaseStore second = store(Duration.ofSeconds(30))) {
            assertASharedTicketOutlivesTheWaitThatSetItLast(store, second);
        }
    }

    /**
     * {@code store} and {@code second} wait for the same holder-to-be, {@code second} longer (its time set, the ticket
     * written again), a later caller behind them; {@code second}'s wait ends: past a ticket's TTL both tickets are
     * there, and {@code store}'s waiter is served before the later caller.
     */
    private void assertASharedTicketOutlivesTheWaitThatSetItLast(LeaseStore store, LeaseStore second) throws Exception {
        Process holder = heldByASleeper(store);
        Identity waiter = children.sleeping();
        java.util.concurrent.ExecutorService three = java.util.concurrent.Executors.newFixedThreadPool(3);
        try (LeaseStore third = store(Duration.ofSeconds(30))) {
            Etcd raw = raw();
            String queue = prefix + "build.queue/";
            Future<Acquisition> first = three.submit(() -> store.acquire("build", waiter, Duration.ofMinutes(3)));
            Eventually.until("the waiter's ticket", Duration.ofSeconds(30), () -> raw.list(queue), t -> t.size() == 1);
            Future<Acquisition> longer = Eventually.submittedInside(three, "waitInQueue", // its time set, the ticket written again
                    () -> second.acquire("build", waiter, Duration.ofMinutes(4)));
            Future<Acquisition> later = three.submit(() -> third.acquire("build", children.sleeping(), Duration.ofMinutes(3)));
            Eventually.until("the later caller's ticket", Duration.ofSeconds(30), () -> raw.list(queue), t -> t.size() == 2);
            longer.cancel(true);
            Thread.sleep(13_000); // past a ticket's TTL (10 s): one on an etcd lease nobody keeps alive is gone by then
            assertThat(raw.list(queue)).as("both tickets: the first wait's goes on").hasSize(2);
            holder.destroyForcibly();
            assertThat(first.get(Eventually.scaled(Duration.ofSeconds(30)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("served before the later caller").isInstanceOf(Acquisition.Granted.class);
            later.cancel(true);
        } finally {
            three.shutdownNow();
        }
    }

    @Test
    void aReleaseWakesAWaiterThroughTheWatch() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Lease held = ((Acquisition.Granted) store.acquire("build", children.sleeping())).lease();
        Identity waiter = children.sleeping();
        LeaseStore waiting = noPolls();
        long ms = grantedAfter(() -> waiting.acquire("build", waiter, Duration.ofSeconds(20)), held::release);
        assertThat(ms).as("granted %d ms after the release, woken by the record's watch (no poll)", ms)
                .isLessThan(Eventually.scaled(Duration.ofSeconds(1)).toMillis());
    }

    @Test
    void aSpawnedChildHoldsItAndItsExitEndsIt() throws Exception {
        // Tracked: the child exits before its hand-off, and what it left is the kernel's to say;
        // untracked, a token scan decides, which same-user processes that live a millisecond keep
        // inconclusive on a busy machine (LeaseSpawnIT covers that path where a scan can complete).
        LeaseStore store = store(LeasePolicy.builder().ttl(Duration.ofSeconds(30)).trackDescendants(true).build());
        Acquisition s = store.spawn("build", new ProcessBuilder("sh", "-c",
                "[ \"$PROCLIVE_LEASE_ETCD\" = \"$0\" ] && [ \"$PROCLIVE_LEASE_PREFIX\" = \"$1\" ] && exit 7; exit 1",
                etcd.endpoints().get(0).toString(), prefix));
        assertThat(s).isInstanceOf(Acquisition.Started.class);
        Process child = ((Acquisition.Started) s).process();
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        LeaseRecord r = Eventually.until("the child's end recorded", Duration.ofSeconds(10),
                () -> store.read("build").orElseThrow(), now -> !now.granted());
        assertThat(r.ended()).get().satisfies(e -> {
            assertThat(e.how()).isEqualTo(LeaseChange.EXITED);
            assertThat(e.exitCode()).hasValue(7);
        });
    }

    @Test
    void noMemberAnsweringIsAnIoErrorNeverAGrant() throws Exception {
        LeaseStore nowhere = LeaseStore.builder().etcd(List.of(URI.create("http://127.0.0.1:1"))).prefix("x/").build();
        Identity me = ProcLive.current().orElseThrow();
        assertThatThrownBy(() -> nowhere.acquire("build", me)).isInstanceOf(IOException.class)
                .hasMessageContaining("no etcd member answered");
    }

    @Test
    void aNameThatWouldBeAFenceKeyIsRefused() throws Exception {
        LeaseStore store = store(Duration.ofSeconds(30));
        Identity me = ProcLive.current().orElseThrow();
        assertThatThrownBy(() -> store.acquire("build.fence", me)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(".fence");
    }
}
