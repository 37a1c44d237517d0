package dev.proclive.lease;

import dev.proclive.Eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.ProcLive;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A granted lease keeps itself while this JVM lives: without a call of {@code renew()} the store
 * keeps it fresh (over a directory its session file names it, written every third of its TTL; the
 * record itself is not rewritten) until it is released; a look that finds it broken says it is
 * lost. (The same on etcd: {@code EtcdLeaseIT}.)
 */
class LeaseKeepsItselfIT {

    @TempDir
    Path dir;

    @Test
    void aLeaseIsKeptFreshByItsStoreUntilReleasedAndABrokenOneSaysItIsLost() throws Exception {
        // each keeping write must land within 5/12 of the TTL: a second on a quiet machine, scaled to this one
        Duration ttl = Eventually.scaled(Duration.ofSeconds(1));
        try (LeaseStore store = LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(ttl).build()).build()) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            Instant granted = lease.record().renewedAt();
            String named = "\"build\":" + lease.fence();
            String session = Eventually.until("kept fresh three TTLs after its grant, no renew() called",
                    ttl.multipliedBy(3).plusSeconds(30), () -> sessionText(),
                    text -> text.contains(named) && renewedAt(text).isAfter(granted.plus(ttl.multipliedBy(3))));
            assertThat(renewedAt(session)).as("within its last TTL").isAfter(Instant.now().minus(ttl));
            assertThat(store.read("build").orElseThrow()).as("the record is not rewritten").isEqualTo(lease.record());
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.knownLost()).isFalse();

            assertThat(store.breakLease("build")).isPresent(); // an operator breaks it
            Eventually.until("known lost", Duration.ofSeconds(30), lease::knownLost);
            assertThat(lease.knownLost()).as("a look found it broken").isTrue();

            Lease next = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            String nextNamed = "\"build\":" + next.fence();
            Eventually.until("the next grant named", Duration.ofSeconds(30), () -> sessionText(), t -> t.contains(nextNamed));
            assertThat(next.release()).isTrue();
            Eventually.until("no longer named once released", Duration.ofSeconds(30), () -> sessionText(),
                    t -> !t.contains("\"build\""));
        }
    }

    /** The text of the store's one session file. */
    private String sessionText() throws java.io.IOException {
        List<String> texts = SessionFiles.texts(dir);
        assertThat(texts).as("one session file").hasSizeLessThanOrEqualTo(1);
        return texts.isEmpty() ? "" : texts.get(0);
    }

    private static Instant renewedAt(String session) {
        return SessionFiles.renewedAt(session);
    }
}
