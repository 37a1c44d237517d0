package dev.proclive.lease;

import dev.proclive.spi.internal.Descendants;
import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.lease.core.Pause;
import dev.proclive.etcd.EtcdGateway;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lost is said whenever anyone else may be granted, against a real etcd member behind a proxy that
 * stalls the record writes ({@code /v3/kv/txn}) while keep-alives pass: a record is not rewritten
 * to stay alive, so its holder keeps it while its session (the etcd lease it is on) lives, and
 * writes under its fence; once the keep-alives stall too, it is told it lost; a newcomer on another
 * machine that takes an UNKNOWN holder's lease after its TTL is granted only after that, and no
 * write of the old holder comes after the grant.
 */
@EnabledOnOs(OS.LINUX)
class EtcdLostIT {

    @TempDir
    Path dir;
    EtcdCluster etcd;

    @BeforeEach
    void startOne() throws Exception {
        etcd = EtcdCluster.start(dir, 1);
    }

    @AfterEach
    void stop() throws Exception {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Test
    void aHolderWhoseRecordWritesStallIsToldLostBeforeATakeUnknownNewcomerIsGranted() throws Exception {
        Duration ttl = Duration.ofSeconds(3);
        LeaseLifecycleTest.Host here = new LeaseLifecycleTest.Host(); // the holder's machine, as seen from it
        Identity holder = here.start(60, 50, "600");
        try (StallingProxy proxy = new StallingProxy(etcd.endpoints().get(0));
             LeaseStore holders = LeaseStore.builder().etcdClient(EtcdGateway.open(List.of(proxy.endpoint()), Optional.empty(),
                     Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper())).prefix("lost/").policy(LeasePolicy.builder().ttl(ttl).build()).checker(LivenessChecker.of(here)).clock(Clock.systemUTC()).pause(Pause.REAL).descendants(Descendants.NONE).build();
             LeaseStore elsewhere = LeaseStore.builder().etcd(etcd.endpoints()).prefix("lost/").policy(LeasePolicy.builder().ttl(ttl).takeUnknownAfterTtl(true).build()).build()) {
            Lease lease = ((Acquisition.Granted) holders.acquire("build", holder)).lease();
            List<Long> writes = new CopyOnWriteArrayList<>();
            AtomicLong lostAt = new AtomicLong();
            ScheduledExecutorService command = Executors.newScheduledThreadPool(2);
            try {
                // What lease run does: renew every third of the TTL, write while the lease is not known lost.
                command.scheduleAtFixedRate(() -> {
                    try {
                        lease.renew();
                    } catch (Exception e) {
                        // stalled, or lost: tried again next period
                    }
                }, ttl.toMillis() / 3, ttl.toMillis() / 3, TimeUnit.MILLISECONDS);
                command.scheduleAtFixedRate(() -> {
                    if (lostAt.get() != 0) {
                        return;
                    }
                    if (lease.knownLost()) {
                        lostAt.set(System.currentTimeMillis());
                    } else {
                        writes.add(System.currentTimeMillis());
                    }
                }, 0, 50, TimeUnit.MILLISECONDS);
                java.time.Instant since = lease.record().acquiredAt();
                dev.proclive.Eventually.until("a TTL passed, renewed meanwhile", ttl.plusSeconds(30),
                        () -> elsewhere.read("build").map(r -> r.renewedAt().isAfter(since.plus(ttl))).orElse(false)
                                || lease.knownLost());
                assertThat(lease.knownLost()).as("renewed while nothing stalls").isFalse();
                proxy.stall("/v3/kv/txn");
                Identity newcomer = dev.proclive.ProcLive.current().orElseThrow();
                // Its record not rewritten for twice its TTL, its session kept alive: the record stays
                // the holder's, and a newcomer that takes an UNKNOWN holder's lease waits for the session.
                long stalledAt = System.nanoTime();
                List<Acquisition> meanwhile = new CopyOnWriteArrayList<>();
                while (System.nanoTime() - stalledAt < ttl.toNanos() * 2) {
                    meanwhile.add(elsewhere.acquire("build", newcomer));
                    Thread.sleep(200);
                }
                assertThat(meanwhile).as("never granted while the holder's session lives").isNotEmpty()
                        .allMatch(a -> a instanceof Acquisition.Undecided);
                assertThat(lease.knownLost()).as("nobody else may be granted: not lost").isFalse();
                proxy.stall("/v3/lease/keepalive"); // now the session is not kept alive either
                dev.proclive.Eventually.until("the newcomer is granted once the holder's session expired", Duration.ofSeconds(60),
                        () -> elsewhere.acquire("build", newcomer) instanceof Acquisition.Granted);
                long grantedAt = System.currentTimeMillis();
                assertThat(lostAt.get()).as("the holder was told it lost first").isNotZero().isLessThan(grantedAt);
                long granted = grantedAt;
                assertThat(writes).as("no write under the old fence after the grant").allMatch(w -> w < granted);
                assertThat(proxy.calls.get("/v3/lease/keepalive").get()).as("keep-alives passed meanwhile").isPositive();
            } finally {
                command.shutdownNow();
                proxy.release();
            }
        }
    }

    /**
     * Behind a member whose answers to leased writes come late (past three quarters of the TTL,
     * within it), the holder's renewal says lost; a newcomer on etcd itself is not granted while the
     * command that was spawned under the lease runs (nothing of this JVM revokes or ends its lease
     * before it stopped), and is granted once it has.
     */
    @Test
    void aLostCommandsLeaseIsFreedOnlyOnceTheCommandStoppedBehindAMemberThatAnswersLate() throws Exception {
        long ttlMs = 1000 * (long) Math.ceil(3 * dev.proclive.Eventually.slowness());
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofMillis(ttlMs)).build();
        try (StallingProxy proxy = new StallingProxy(etcd.endpoints().get(0));
             LeaseStore holders = LeaseStore.builder().etcdClient(EtcdGateway.open(List.of(proxy.endpoint()), Optional.empty(),
                     Duration.ofMillis(ttlMs * 2), dev.proclive.text.StrictJson.mapper())).prefix("late/").policy(policy)
                     .build();
             LeaseStore newcomers = LeaseStore.builder().etcd(etcd.endpoints()).prefix("late/").policy(policy).build()) {
            Acquisition.Started started = (Acquisition.Started) holders.spawn("build", new ProcessBuilder("sleep", "600"));
            Process command = started.process();
            Identity newcomer = dev.proclive.ProcLive.current().orElseThrow();
            try {
                proxy.leasedWriteAnswerDelayMillis = ttlMs * 83 / 100; // 2.5 s of a TTL of 3 s
                org.assertj.core.api.Assertions.assertThatThrownBy(started.lease()::renew) // as its holder asks
                        .isInstanceOf(LeaseLostException.class);
                LeaseLost lost = started.lease().lost().get(ttlMs * 10, TimeUnit.MILLISECONDS);
                assertThat(lost.why()).isEqualTo(LeaseChange.UNCONFIRMED);
                int before = proxy.calls.get("/v3/lease/keepalive").get();
                List<Acquisition> answers = new CopyOnWriteArrayList<>();
                dev.proclive.Eventually.until("three keep-alive rounds after the loss, or the newcomer granted",
                        Duration.ofSeconds(60), () -> {
                            answers.add(newcomers.acquire("build", newcomer));
                            return answers.get(answers.size() - 1) instanceof Acquisition.Granted
                                    || proxy.calls.get("/v3/lease/keepalive").get() >= before + 3;
                        });
                assertThat(answers).as("never granted while the command may write").noneMatch(a -> a instanceof Acquisition.Granted);
                assertThat(command.isAlive()).isTrue();
            } finally {
                command.destroy();
            }
            command.waitFor();
            proxy.leasedWriteAnswerDelayMillis = 0;
            dev.proclive.Eventually.until("the newcomer is granted once the command stopped", Duration.ofSeconds(60),
                    () -> newcomers.acquire("build", newcomer) instanceof Acquisition.Granted);
        }
    }

    /**
     * Cut off from etcd (keep-alives and reads stalled, its watch still open), the holder's grant is renewed by another
     * process at a TTL of 1 s, onto that process's etcd lease, which the holder cannot learn of and keep: that lease
     * outlives the holder's own, so the holder is told lost before a newcomer is granted (the newcomer was granted
     * about a second after the renewal, seconds before the holder was told).
     */
    @Test
    void aHolderCutOffWhenItsGrantIsRenewedElsewhereAtAShortTtlIsToldBeforeANewcomerIsGranted() throws Exception {
        Duration ttl = Duration.ofSeconds((long) Math.ceil(6 * dev.proclive.Eventually.slowness()));
        LeaseLifecycleTest.Host here = new LeaseLifecycleTest.Host();
        Identity holder = here.start(60, 50, "600");
        LeasePolicy newcomers = LeasePolicy.builder().ttl(ttl).takeUnknownAfterTtl(true).build();
        try (StallingProxy proxy = new StallingProxy(etcd.endpoints().get(0));
             LeaseStore holders = LeaseStore.builder().etcdClient(EtcdGateway.open(List.of(proxy.endpoint()), Optional.empty(),
                     Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper())).prefix("moved/")
                     .policy(LeasePolicy.builder().ttl(ttl).build()).checker(LivenessChecker.of(here))
                     .clock(Clock.systemUTC()).pause(Pause.REAL).descendants(Descendants.NONE).build();
             LeaseStore elsewhere = LeaseStore.builder().etcd(etcd.endpoints()).prefix("moved/").policy(newcomers).build()) {
            Lease lease = ((Acquisition.Granted) holders.acquire("build", holder)).lease();
            AtomicLong lostAt = new AtomicLong();
            lease.lost().thenRun(() -> lostAt.compareAndSet(0, System.nanoTime()));
            try {
                proxy.stall("/v3/lease/keepalive");
                proxy.stall("/v3/kv/txn");
                try (LeaseStore renewer = LeaseStore.builder().etcd(etcd.endpoints()).prefix("moved/")
                        .policy(LeasePolicy.builder().ttl(Duration.ofSeconds(1)).build()).build()) {
                    assertThat(renewer.renew("build", lease.fence()).ttl()).isEqualTo(Duration.ofSeconds(1));
                }
                Identity newcomer = dev.proclive.ProcLive.current().orElseThrow();
                dev.proclive.Eventually.until("the newcomer granted", Duration.ofSeconds(120),
                        () -> elsewhere.acquire("build", newcomer) instanceof Acquisition.Granted);
                long grantedAt = System.nanoTime();
                assertThat(lostAt.get()).as("the holder told it lost before the newcomer's grant").isNotZero()
                        .isLessThan(grantedAt);
            } finally {
                proxy.release();
            }
        }
    }

    /** What the keep-alive rounds ask to find a record moved off a kept lease: the keys etcd has on it. */
    @Test
    void theKeysAttachedToAnEtcdLeaseAreTheOnesPutOnIt() throws Exception {
        try (dev.proclive.etcd.Etcd client = EtcdGateway.open(etcd.endpoints(), Optional.empty(), Duration.ofSeconds(5),
                dev.proclive.text.StrictJson.mapper())) {
            long lease = client.grant(Duration.ofSeconds(30));
            client.txn(List.of(), List.of(new dev.proclive.etcd.Etcd.Put("attached/a", new byte[] {1}, lease),
                    new dev.proclive.etcd.Etcd.Put("attached/b", new byte[] {2}, 0)));
            assertThat(client.attached(lease)).hasValue(java.util.Set.of("attached/a"));
            client.revoke(lease);
            assertThat(client.attached(lease)).hasValue(java.util.Set.of());
        }
    }
}
