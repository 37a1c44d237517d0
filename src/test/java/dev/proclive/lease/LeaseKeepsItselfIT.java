package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.ProcLive;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A granted lease keeps itself while this JVM lives: the store renews it every third of its TTL
 * without a call of {@code renew()}, until it is released; a renewal that finds it broken stops,
 * and the lease says it is lost. (The same on etcd: {@code EtcdLeaseIT}.)
 */
class LeaseKeepsItselfIT {

    @TempDir
    Path dir;

    @Test
    void aLeaseIsRenewedByItsStoreUntilReleasedAndABrokenOneSaysItIsLost() throws Exception {
        Duration ttl = Duration.ofSeconds(1);
        try (LeaseStore store = LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(ttl).build()).build()) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            Instant granted = lease.record().renewedAt();
            Thread.sleep(3 * ttl.toMillis()); // three TTLs, no renew() called
            LeaseRecord now = store.read("build").orElseThrow();
            assertThat(now.renewedAt()).as("renewed by the store").isAfter(granted);
            assertThat(now.renewedAt()).as("within its last TTL").isAfter(Instant.now().minus(ttl));
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.knownLost()).isFalse();

            assertThat(store.breakLease("build")).isPresent(); // an operator breaks it
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!lease.knownLost() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(lease.knownLost()).as("the next renewal found it broken").isTrue();

            Lease next = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            assertThat(next.release()).isTrue();
            Instant released = store.read("build").orElseThrow().renewedAt();
            Thread.sleep(2 * ttl.toMillis());
            assertThat(store.read("build").orElseThrow().renewedAt()).as("not renewed once released").isEqualTo(released);
        }
    }
}
