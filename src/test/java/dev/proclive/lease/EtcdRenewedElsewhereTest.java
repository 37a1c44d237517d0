package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * On etcd a renewal by another process at another TTL ({@code lease renew --ttl}) moves the record onto that process's
 * etcd lease, which its holder does not keep until it reads the move: that lease lasts no less than the one the record
 * left, so a holder cut off meanwhile is told lost (3/4 of its TTL unconfirmed) before the record can go.
 */
class EtcdRenewedElsewhereTest {

    private final FakeEtcd etcd = new FakeEtcd();
    private final Identity me = ProcLive.current().orElseThrow();

    private LeaseStore store(Duration ttl) throws java.io.IOException {
        return LeaseStore.builder().etcdClient(etcd).prefix("p/").policy(LeasePolicy.builder().ttl(ttl).build()).build();
    }

    private long ttlOfItsEtcdLease() throws java.io.IOException {
        return etcd.timeToLive(etcd.get("p/build").orElseThrow().lease());
    }

    @Test
    void aShorterTtlSetElsewhereLastsOnEtcdAsLongAsTheLeaseItLeft() throws Exception {
        try (LeaseStore holding = store(Duration.ofSeconds(30))) {
            Lease lease = ((Acquisition.Granted) holding.acquire("build", me)).lease();
            long before = etcd.get("p/build").orElseThrow().lease();
            try (LeaseStore elsewhere = store(Duration.ofSeconds(2))) {
                assertThat(elsewhere.renew("build", lease.fence()).ttl()).as("the record says what was asked")
                        .isEqualTo(Duration.ofSeconds(2));
            }
            assertThat(etcd.get("p/build").orElseThrow().lease()).as("moved onto the renewer's").isNotEqualTo(before);
            assertThat(ttlOfItsEtcdLease()).as("its etcd lease outlives what its holder was promised").isGreaterThanOrEqualTo(30);
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.release()).isTrue();
        }
    }

    /** The floor is the longer of the two: the record's TTL, and the time its etcd lease had left (plus a second). */
    @Test
    void itOutlivesBothTheRecordsTtlAndItsEtcdLeasesTimeLeft() throws Exception {
        try (LeaseStore holding = store(Duration.ofSeconds(30))) {
            Lease lease = ((Acquisition.Granted) holding.acquire("build", me)).lease();
            String text = new String(etcd.get("p/build").orElseThrow().value(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(text).contains("\"ttlMillis\":30000");
            etcd.put("p/build", text.replace("\"ttlMillis\":30000", "\"ttlMillis\":5000")); // says 5 s, on 30 s
            renewedElsewhereAt(lease, 2);
            assertThat(ttlOfItsEtcdLease()).as("its etcd lease's time left").isEqualTo(31);
            long shortLease = etcd.grant(Duration.ofSeconds(4));
            etcd.txn(java.util.List.of(), java.util.List.of(new dev.proclive.etcd.Etcd.Put("p/build", text.getBytes(
                    java.nio.charset.StandardCharsets.UTF_8), shortLease))); // says 30 s, on a lease of 4 s
            renewedElsewhereAt(lease, 2);
            assertThat(ttlOfItsEtcdLease()).as("its record's TTL").isEqualTo(30);
        }
    }

    private void renewedElsewhereAt(Lease lease, long seconds) throws Exception {
        try (LeaseStore elsewhere = store(Duration.ofSeconds(seconds))) {
            elsewhere.renew("build", lease.fence());
        }
    }

    @Test
    void aLongerTtlSetElsewhereIsItsEtcdLeasesTtl() throws Exception {
        try (LeaseStore holding = store(Duration.ofSeconds(3))) {
            Lease lease = ((Acquisition.Granted) holding.acquire("build", me)).lease();
            renewedElsewhereAt(lease, 60);
            assertThat(ttlOfItsEtcdLease()).isEqualTo(60);
            assertThat(lease.release()).isTrue();
        }
    }

    /** Its own renewal at another TTL, from the store that keeps it: nothing to outlive, the TTL asked. */
    @Test
    void aStoreThatKeepsItsGrantRenewsItAtTheTtlItAsks() throws Exception {
        try (LeaseStore holding = store(Duration.ofSeconds(30))) {
            Lease lease = ((Acquisition.Granted) holding.acquire("build", me)).lease();
            etcd.put("p/build", new String(etcd.get("p/build").orElseThrow().value(), java.nio.charset.StandardCharsets.UTF_8)
                    .replace("\"ttlMillis\":30000", "\"ttlMillis\":5000")); // as if granted at 5 s, on its 30 s lease
            lease.renew(); // at the store's 30 s: another TTL than the record's
            assertThat(ttlOfItsEtcdLease()).isEqualTo(30);
            assertThat(lease.release()).isTrue();
        }
    }

    /**
     * Its holder's watch gone quiet (behind a proxy that keeps the stream open and silent), the move is found by the
     * keep-alive rounds, which look at what each kept etcd lease carries: the record's new lease is kept (it lapsed a
     * TTL after the renewer left, its holder still keeping the lease the record had left).
     */
    @Test
    void aMoveNoWatchToldIsFoundByTheKeepAliveRounds() throws Exception {
        try (LeaseStore holding = store(Duration.ofSeconds(3))) {
            Lease lease = ((Acquisition.Granted) holding.acquire("build", me)).lease();
            etcd.watchesQuiet = true;
            renewedElsewhereAt(lease, 1);
            long moved = etcd.get("p/build").orElseThrow().lease();
            int before = etcd.keepAlivesOf.getOrDefault(moved, new java.util.concurrent.atomic.AtomicInteger()).get();
            dev.proclive.Eventually.until("the holder's store keeps the lease its record moved to", Duration.ofSeconds(30),
                    () -> etcd.keepAlivesOf.getOrDefault(moved, new java.util.concurrent.atomic.AtomicInteger()).get()
                            >= before + 2);
            assertThat(lease.lost()).isNotDone();
            etcd.watchesQuiet = false;
            assertThat(lease.release()).isTrue();
        }
    }

    /**
     * Its holder's watch gone quiet, a record ended by another process ({@code lease break}) is found by the same
     * rounds: it left the kept etcd lease, and the holder is told within a round or two of its TTL, not when the watch
     * is next made anew (30 s).
     */
    @Test
    void aBreakNoWatchToldIsToldByTheKeepAliveRounds() throws Exception {
        try (LeaseStore holding = store(Duration.ofSeconds(3))) {
            Lease lease = ((Acquisition.Granted) holding.acquire("build", me)).lease();
            etcd.watchesQuiet = true;
            try (LeaseStore elsewhere = store(Duration.ofSeconds(3))) {
                assertThat(elsewhere.breakLease("build")).isPresent();
            }
            LeaseLost lost = lease.lost().get(10, java.util.concurrent.TimeUnit.SECONDS); // a round is 1 s; the watch, 30 s
            assertThat(lost.why()).isEqualTo(LeaseChange.BROKEN);
            etcd.watchesQuiet = false;
        }
    }

    /**
     * A grant whose record was broken elsewhere is kept no more once its holder was told: its etcd lease, unused, is let
     * go (it was kept alive, and the record read again, each round for good).
     */
    @Test
    void aBrokenGrantIsKeptNoMoreAndItsEtcdLeaseIsLetGo() throws Exception {
        try (LeaseStore holding = store(Duration.ofSeconds(3))) {
            Lease lease = ((Acquisition.Granted) holding.acquire("build", me)).lease();
            long kept = etcd.get("p/build").orElseThrow().lease();
            try (LeaseStore elsewhere = store(Duration.ofSeconds(3))) {
                assertThat(elsewhere.breakLease("build")).isPresent();
            }
            assertThat(lease.lost().get(10, java.util.concurrent.TimeUnit.SECONDS).why()).isEqualTo(LeaseChange.BROKEN);
            lease.release(); // as a holder told would
            dev.proclive.Eventually.until("the etcd lease let go", Duration.ofSeconds(30), () -> etcd.timeToLive(kept),
                    ttl -> ttl < 0);
        }
    }
}
