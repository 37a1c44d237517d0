package dev.proclive.lease;

import dev.proclive.spi.internal.Descendants;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.lease.core.Pause;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A grant is never revoked under its own write: an etcd whose answers to writes under an etcd
 * lease come back late (the write done at once, its answer later, as behind a slow proxy). The
 * JVM's keep-alive must count that lease as used while the answer is out, or it revokes it (no
 * grant was kept on it yet) and the record just written goes with it. An answer later than the
 * lease can be trusted to live says the grant is lost. In memory, on every OS; real time, since the
 * keep-alive runs on its own thread (TTL 3 s on a quiet machine).
 */
class EtcdSlowAnswerTest {

    /**
     * The TTL: 3 s on a quiet machine, longer by how much slower this one is now (whole seconds, as
     * etcd grants them), so each test keeps its margins; every late answer is a share of it.
     */
    private static final long TTL_MS = 1000 * (long) Math.ceil(3 * dev.proclive.Eventually.slowness());
    private static final LeasePolicy TTL3 = LeasePolicy.builder().ttl(Duration.ofMillis(TTL_MS)).build();

    /** {@code share} of the TTL, in milliseconds. */
    private static long ofTtl(double share) {
        return (long) (TTL_MS * share);
    }

    private static LeaseStore store(FakeEtcd etcd) throws java.io.IOException {
        return LeaseStore.builder().etcdClient(etcd).prefix("slow/").policy(TTL3).checker(LivenessChecker.system())
                .clock(Clock.systemUTC()).pause(Pause.REAL).descendants(Descendants.NONE).build();
    }

    @Test
    void aLeaseHandedToAWriteInFlightIsNotRevokedUnderIt() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        etcd.leasedAnswerDelayMillis = ofTtl(0.57); // past a third of the TTL, within three quarters of it
        Identity me = ProcLive.current().orElseThrow();
        try (LeaseStore store = store(etcd)) {
            Acquisition a = store.acquire("build", me);
            assertThat(a).isInstanceOf(Acquisition.Granted.class);
            Lease lease = ((Acquisition.Granted) a).lease();
            etcd.leasedAnswerDelayMillis = 0;
            assertThat(lease.isValid()).as("the record the answer was for still exists").isTrue();
            lease.renew(); // its record rewritten as its holder asks: the same etcd lease
            int before = etcd.keepAlives.get();
            dev.proclive.Eventually.until("two keep-alive rounds later", java.time.Duration.ofSeconds(10),
                    () -> etcd.keepAlives.get() >= before + 2);
            assertThat(lease.isValid()).as("kept alive, not revoked").isTrue();
            assertThat(etcd.list("slow/").stream().map(kv -> new String(kv.value(), StandardCharsets.UTF_8)))
                    .anyMatch(v -> v.contains("\"state\":\"held\""));
            assertThat(lease.release()).isTrue();
        }
    }

    /**
     * Told its grant is lost (its renewal answered too late), the holder asks again once etcd answers in time, and is
     * granted it anew at its fence: that lease is kept, not told the loss of the grant as it was.
     */
    @Test
    void aHolderGrantedAgainAfterItsLossIsNotToldThatLossAgain() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        Identity me = ProcLive.current().orElseThrow();
        try (LeaseStore store = store(etcd)) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", me)).lease();
            lostToALateRenewal(etcd, lease);
            Acquisition again = store.acquire("build", me);
            assertThat(again).as("%s", again).isInstanceOf(Acquisition.Granted.class);
            Lease anew = ((Acquisition.Granted) again).lease();
            assertThat(anew.fence()).isEqualTo(lease.fence());
            assertThat(anew.lost()).as("granted again, and kept").isNotDone();
            int before = etcd.keepAlives.get();
            dev.proclive.Eventually.until("a TTL of keep-alive rounds later", Duration.ofSeconds(30),
                    () -> etcd.keepAlives.get() >= before + 4);
            assertThat(anew.lost()).as("kept a TTL on").isNotDone();
            assertThat(anew.isValid()).isTrue();
            assertThat(anew.release()).isTrue();
        }
    }

    @Test
    void anAnswerLateByLessThanThreeQuartersOfTheTtlGrantsWhileTheKeepAliveConfirmsTheLease() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        etcd.leasedAnswerDelayMillis = ofTtl(0.5); // answered half the TTL late, a quarter to spare
        Identity me = ProcLive.current().orElseThrow();
        try (LeaseStore store = store(etcd)) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", me)).lease();
            etcd.leasedAnswerDelayMillis = 0;
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.release()).isTrue();
        }
    }

    /**
     * A record whose write is answered later than three quarters of its TTL after its
     * {@code renewedAt} is not trusted to be alive, whatever the etcd lease's keep-alive says: a
     * grant so answered is no grant (seen: {@code Granted} fence 381 after another was granted 389, and {@code lost()} 0.1
     * ms later), and nothing of it is left to hold the lease.
     */
    @Test
    void anAnswerLateByMoreThanThreeQuartersOfTheTtlIsNoGrantWhateverTheKeepAliveSays() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        etcd.leasedAnswerDelayMillis = ofTtl(0.83); // a newcomer taking an UNKNOWN holder's lease may come a sixth of the TTL later
        Identity me = ProcLive.current().orElseThrow();
        try (LeaseStore store = store(etcd)) {
            assertThatThrownBy(() -> store.acquire("build", me)).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("later than three quarters of its TTL")
                    .satisfies(e -> assertThat(((LeaseLostException) e).lost().why()).isEqualTo(LeaseChange.UNCONFIRMED));
            etcd.leasedAnswerDelayMillis = 0;
            dev.proclive.Eventually.until("the record nobody was told of is freed", Duration.ofSeconds(30),
                    () -> etcd.get("slow/build").isEmpty());
        }
    }

    /**
     * A takeover's grant is dated no earlier than the renewal it follows, which a clock ahead may
     * have put in the future: its answer's lateness is measured from when its write was sent all the
     * same, not from that date.
     */
    @Test
    void aLateAnswerToATakeoverDatedAheadIsNoGrant() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        Process dead = new ProcessBuilder("sleep", "600").start();
        Clock ahead = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10));
        try (LeaseStore before = LeaseStore.builder().etcdClient(etcd).prefix("slow/").policy(TTL3)
                .checker(LivenessChecker.system()).clock(ahead).pause(Pause.REAL).descendants(Descendants.NONE).build()) {
            assertThat(before.acquire("build", ProcLive.identify(dead.pid()).orElseThrow()))
                    .isInstanceOf(Acquisition.Granted.class);
        } // closed: its record stays until its etcd lease expires, a TTL on
        dead.destroy();
        dead.waitFor();
        etcd.leasedAnswerDelayMillis = ofTtl(0.83);
        try (LeaseStore store = store(etcd)) {
            assertThatThrownBy(() -> store.acquire("build", ProcLive.current().orElseThrow()))
                    .isInstanceOf(LeaseLostException.class).hasMessageContaining("later than three quarters of its TTL");
        }
    }

    /**
     * A grant answered too late leaves no record held for its caller behind, though another grant
     * of this JVM keeps the shared etcd lease alive: nobody was told of it, so it is freed at once,
     * and a newcomer is granted (it was left held, never renewed, 4 TTLs on: {@code Held}, its
     * caller alive).
     */
    @Test
    void aLateGrantIsFreedThoughAnotherGrantKeepsItsEtcdLeaseAlive() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        etcd.leasedAnswerDelayMillis = ofTtl(0.83);
        Identity me = ProcLive.current().orElseThrow();
        try (LeaseStore store = store(etcd)) {
            assertThatThrownBy(() -> store.acquire("build", me)).isInstanceOf(LeaseLostException.class);
            etcd.leasedAnswerDelayMillis = 0;
            Lease other = ((Acquisition.Granted) store.acquire("other", me)).lease(); // on the same etcd lease, kept alive
            assertThat(etcd.get("slow/build")).as("the record of the grant nobody was told of").isEmpty();
            Process newcomer = new ProcessBuilder("sleep", "600").start();
            try {
                Acquisition a = store.acquire("build", ProcLive.identify(newcomer.pid()).orElseThrow());
                assertThat(a).isInstanceOfSatisfying(Acquisition.Granted.class,
                        g -> assertThat(g.previous()).as("no phantom before it").isEmpty());
                assertThat(((Acquisition.Granted) a).lease().release()).isTrue();
            } finally {
                newcomer.destroy();
                newcomer.waitFor();
            }
            assertThat(other.isValid()).isTrue();
            assertThat(other.release()).isTrue();
        }
    }

    /**
     * A command whose lease is lost keeps its etcd lease in use until it has stopped: a renewal
     * answered too late says lost, and nothing this JVM does (no revoke) frees the lease for a
     * newcomer while the command may still write; once it exits, its end is written.
     */
    @Test
    void aLostCommandsLeaseIsNotFreedWhileTheCommandRuns() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        try (LeaseStore store = store(etcd)) {
            Acquisition.Started started = (Acquisition.Started) store.spawn("build", new ProcessBuilder("sleep", "600"));
            Process command = started.process();
            try {
                Lease lease = started.lease();
                lostToALateRenewal(etcd, lease);
                int before = etcd.keepAlives.get();
                dev.proclive.Eventually.until("three keep-alive rounds after the loss, or the record freed",
                        Duration.ofSeconds(30), () -> etcd.keepAlives.get() >= before + 3 || etcd.get("slow/build").isEmpty());
                assertThat(etcd.get("slow/build")).as("the command runs: its record is not revoked under it")
                        .hasValueSatisfying(kv -> assertThat(new String(kv.value(), StandardCharsets.UTF_8))
                                .contains("\"state\":\"held\""));
                assertThat(command.isAlive()).isTrue();
            } finally {
                command.destroy();
            }
            command.waitFor();
            try {
                dev.proclive.Eventually.until("its end written once it stopped", Duration.ofSeconds(10),
                        () -> etcd.get("slow/build").map(kv -> new String(kv.value(), StandardCharsets.UTF_8)
                                .contains("\"how\":\"exited\"")).orElse(false));
            } catch (AssertionError notWritten) {
                // Not written: the command's scan for what it left behind was outrun (a busy machine) or
                // could not read another user's process. The lease is not kept for it all the same: a
                // newcomer is granted it, or told why the end cannot be proven yet.
                Acquisition newcomer = store.acquire("build", ProcLive.current().orElseThrow());
                assumeEndCouldBeProven(newcomer);
                assertThat(newcomer).as("%s; a newcomer after it", notWritten.getMessage())
                        .isInstanceOfSatisfying(Acquisition.Granted.class, g -> assertThat(g.previous()).isPresent());
            }
        }
    }

    /**
     * An untracked command's end is proven by the token scan, which a normal user's cannot be when
     * another user's process started since (a cron job, a build as root), and nobody's can be while
     * processes of the same user end under every pass: the lease is then rightly Undecided. Root
     * reads every process, so on a quiet machine (and in CI) the assertion before this holds.
     */
    private static void assumeEndCouldBeProven(Acquisition a) {
        if (a instanceof Acquisition.Undecided u) {
            org.junit.jupiter.api.Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
                    "another user's process made the scan incomplete, as it must for a normal user: " + a);
            dev.proclive.BusyMachine.assumeScanNotOutrun(u.why());
        }
    }

    @Test
    void anAnswerLaterThanTheLeaseCanLiveSaysLostAndAdmitsNoWrite() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        etcd.leasedAnswerDelayMillis = ofTtl(0.83); // past three quarters of the TTL
        etcd.keepAliveDown = true; // and nothing confirms the lease meanwhile
        Identity me = ProcLive.current().orElseThrow();
        try (LeaseStore store = store(etcd)) {
            assertThatThrownBy(() -> store.acquire("build", me)).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("later than its etcd lease can be trusted to live");
        }
    }
    /**
     * A check that reads while no member answers, and whose grant is known lost before the read gives up, says
     * the lease is lost: a writer told only "no member answered" might retry its write on the next member.
     */
    @Test
    void aCheckWhoseReadHangsUntilTheGrantIsLostSaysItIsLost() throws Exception {
        whileReadsHang(false, (etcd, lease, hang, two) -> {
            java.util.concurrent.Future<?> ensure = dev.proclive.Eventually.submittedInside(two, "await", // its read hangs
                    () -> {
                        lease.ensureValid();
                        return null;
                    });
            java.util.concurrent.Future<Boolean> valid = dev.proclive.Eventually.submittedInside(two, "await", lease::isValid);
            etcd.keepAliveDown = true; // no member confirms the grant while the reads hang
            LeaseLost lost = lease.lost().get(dev.proclive.Eventually.scaled(Duration.ofSeconds(30)).toMillis(),
                    java.util.concurrent.TimeUnit.MILLISECONDS);
            assertThat(lost.why()).isEqualTo(LeaseChange.UNCONFIRMED);
            hang.countDown(); // the reads give up now
            assertThatThrownBy(() -> ensure.get(30, java.util.concurrent.TimeUnit.SECONDS))
                    .hasCauseInstanceOf(LeaseLostException.class)
                    .satisfies(e -> assertThat(e.getCause().getSuppressed()).as("the read's failure kept")
                            .anyMatch(s -> s.getMessage().contains("the read hung")));
            assertThat(valid.get(30, java.util.concurrent.TimeUnit.SECONDS)).as("known lost: not valid").isFalse();
        });
    }

    /** A read answered late, after the grant was found lost, shows what stood before the loss: isValid says false. */
    @Test
    void aCheckAnsweredAfterTheGrantWasLostSaysItIsNotValid() throws Exception {
        whileReadsHang(true, (etcd, lease, hang, two) -> {
            java.util.concurrent.Future<Boolean> valid = dev.proclive.Eventually.submittedInside(two, "await", lease::isValid);
            etcd.keepAliveDown = true;
            lease.lost().get(dev.proclive.Eventually.scaled(Duration.ofSeconds(30)).toMillis(),
                    java.util.concurrent.TimeUnit.MILLISECONDS);
            hang.countDown(); // the answer comes now, the record as it stood
            assertThat(valid.get(30, java.util.concurrent.TimeUnit.SECONDS)).as("known lost: not valid").isFalse();
        });
    }

    /** A test run while the reads of lease build's holder hang on {@code hang}, with two threads to ask from. */
    interface WhileReadsHang {
        void run(FakeEtcd etcd, Lease lease, java.util.concurrent.CountDownLatch hang,
                 java.util.concurrent.ExecutorService two) throws Exception;
    }

    /** {@code test} over a lease granted to this process, its reads held; {@code answer}: they then answer, else fail. */
    private static void whileReadsHang(boolean answer, WhileReadsHang test) throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        try (LeaseStore store = store(etcd)) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            java.util.concurrent.CountDownLatch hang = new java.util.concurrent.CountDownLatch(1);
            etcd.hungReadsAnswer = answer;
            etcd.readsHang = hang;
            java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
            try {
                test.run(etcd, lease, hang, two);
            } finally {
                hang.countDown();
                two.shutdownNow();
            }
        }
    }

    /** Its renewal, as its holder asks, answered too late: {@code lease} is told lost, and answers come at once after. */
    private static void lostToALateRenewal(FakeEtcd etcd, Lease lease) throws Exception {
        etcd.leasedAnswerDelayMillis = ofTtl(0.83);
        assertThatThrownBy(lease::renew).isInstanceOf(LeaseLostException.class);
        assertThat(lease.lost().get(TTL_MS * 10, java.util.concurrent.TimeUnit.MILLISECONDS).why())
                .isEqualTo(LeaseChange.UNCONFIRMED);
        etcd.leasedAnswerDelayMillis = 0;
    }

    /**
     * Lease build granted to {@code holder} by etcd, its caller's thread interrupted while it waits for the
     * answer, so that nobody is told of it; {@code down}: etcd goes down with the answer, so the caller
     * cannot read back what stands either (it comes back up once the caller has given up).
     */
    private static void grantedUntold(FakeEtcd etcd, LeaseStore store, Identity holder, boolean down) throws Exception {
        etcd.leasedAnswerDelayMillis = 60_000;
        java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            java.util.concurrent.Future<Acquisition> asked = one.submit(() -> store.acquire("build", holder));
            dev.proclive.Eventually.until("the grant written, its answer not yet given", Duration.ofSeconds(30),
                    () -> etcd.list("slow/build").stream().anyMatch(kv -> kv.key().equals("slow/build")));
            etcd.down = down;
            asked.cancel(true); // interrupts the thread waiting for the answer
            one.shutdown();
            assertThat(one.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        } finally {
            one.shutdownNow();
            etcd.leasedAnswerDelayMillis = 0;
            etcd.down = false;
        }
    }

    /**
     * A grant whose answer never reaches its caller (the thread interrupted while it waited for it, the
     * write done) is told to nobody, so it is ended: it would otherwise stay held by its live holder,
     * kept alive as long as this JVM keeps any other grant, and no newcomer could take the free lease.
     */
    @Test
    void aGrantWhoseAnswerTheCallerNeverHadIsEnded() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        dev.proclive.Children children = new dev.proclive.Children();
        try (LeaseStore store = store(etcd)) {
            Identity me = ProcLive.current().orElseThrow();
            assertThat(store.acquire("other", me)).as("another grant keeps this JVM's etcd lease alive")
                    .isInstanceOf(Acquisition.Granted.class);
            grantedUntold(etcd, store, children.sleeping(), false);
            assertThat(store.read("build")).as("the grant nobody was told of is ended")
                    .hasValueSatisfying(r -> assertThat(r.granted()).isFalse());
            assertThat(store.acquire("build", children.sleeping())).as("a newcomer takes the free lease")
                    .isInstanceOf(Acquisition.Granted.class);
        } finally {
            children.killAll();
        }
    }
    /**
     * A grant whose answer its caller never had, where etcd could not be asked what stands either (it
     * went down with the answer): ended once etcd answers again, though another grant of this JVM keeps
     * the shared etcd lease alive meanwhile.
     */
    @Test
    void aGrantNobodyWasToldOfIsEndedOnceEtcdAnswersAgain() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        dev.proclive.Children children = new dev.proclive.Children();
        try (LeaseStore store = store(etcd)) {
            Identity me = ProcLive.current().orElseThrow();
            assertThat(store.acquire("other", me)).as("another grant keeps this JVM's etcd lease alive")
                    .isInstanceOf(Acquisition.Granted.class);
            grantedUntold(etcd, store, children.sleeping(), true);
            dev.proclive.Eventually.until("the grant nobody was told of ended", Duration.ofSeconds(30),
                    () -> store.read("build"), r -> r.isPresent() && !r.get().granted());
            assertThat(store.acquire("build", children.sleeping())).as("a newcomer takes the free lease")
                    .isInstanceOf(Acquisition.Granted.class);
        } finally {
            children.killAll();
        }
    }

    /**
     * A grant whose answer its caller never had, but that another caller was granted again meanwhile (the
     * same holder, asking from another thread), stays: it was told, and its holder writes under it.
     */
    @Test
    void aGrantAnotherCallerWasToldOfMeanwhileIsNotEnded() throws Exception {
        FakeEtcd etcd = new FakeEtcd();
        dev.proclive.Children children = new dev.proclive.Children();
        try (LeaseStore store = store(etcd)) {
            Identity holder = children.sleeping();
            etcd.leasedAnswerDelayMillis = 60_000;
            java.util.concurrent.ExecutorService one = java.util.concurrent.Executors.newSingleThreadExecutor();
            Acquisition told;
            try {
                java.util.concurrent.Future<Acquisition> asked = one.submit(() -> store.acquire("build", holder));
                dev.proclive.Eventually.until("the grant written, its answer not yet given", Duration.ofSeconds(30),
                        () -> etcd.list("slow/build").stream().anyMatch(kv -> kv.key().equals("slow/build")));
                etcd.leasedAnswerDelayMillis = 0; // the first answer stays late; the next ones come at once
                told = store.acquire("build", holder);
                assertThat(told).as("granted again to the other caller").isInstanceOf(Acquisition.Granted.class);
                asked.cancel(true);
                one.shutdown();
                assertThat(one.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            } finally {
                one.shutdownNow();
            }
            Lease lease = ((Acquisition.Granted) told).lease();
            assertThat(store.read("build")).as("the grant the other caller holds stays")
                    .hasValueSatisfying(r -> assertThat(r.granted()).isTrue());
            assertThat(lease.isValid()).isTrue();
            assertThat(store.acquire("build", children.sleeping())).as("a newcomer is refused")
                    .isInstanceOf(Acquisition.Held.class);
        } finally {
            children.killAll();
        }
    }
}
