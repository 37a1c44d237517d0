package dev.proclive.lease;

import dev.proclive.Eventually;
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
            LeaseRecord now = Eventually.until("renewed three TTLs after its grant, no renew() called",
                    ttl.multipliedBy(3).plusSeconds(30), () -> store.read("build").orElseThrow(),
                    r -> r.renewedAt().isAfter(granted.plus(ttl.multipliedBy(3))));
            assertThat(now.renewedAt()).as("renewed by the store").isAfter(granted);
            assertThat(now.renewedAt()).as("within its last TTL").isAfter(Instant.now().minus(ttl));
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.knownLost()).isFalse();

            assertThat(store.breakLease("build")).isPresent(); // an operator breaks it
            Eventually.until("known lost", Duration.ofSeconds(30), lease::knownLost);
            assertThat(lease.knownLost()).as("the next renewal found it broken").isTrue();

            Lease next = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            assertThat(next.release()).isTrue();
            Instant released = store.read("build").orElseThrow().renewedAt();
            Thread.sleep(2 * ttl.toMillis()); // time itself is tested: two TTLs pass, and no renewal comes
            assertThat(store.read("build").orElseThrow().renewedAt()).as("not renewed once released").isEqualTo(released);
        }
    }
}
