package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Children;
import dev.proclive.Eventually;
import dev.proclive.Identity;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory holder whose renewals fail (its directory turned read-only, full, failing) hears that
 * its grant is unconfirmed at three quarters of its TTL after its last renewal that went through,
 * as on etcd: before a newcomer that takes an UNKNOWN holder's lease after the TTL can take it.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class DirectoryUnconfirmedTest {

    @TempDir
    Path tmp;
    final Children children = new Children();

    @AfterEach
    void kill() throws InterruptedException {
        children.killAll();
    }

    /** A write that fails, as on a file system remounted read-only. */
    private static final Runnable READ_ONLY = () -> {
        throw new UncheckedIOException(new IOException("Read-only file system"));
    };

    private static LeaseStore store(Path dir, Duration ttl) throws IOException {
        return LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(ttl).build()).build();
    }

    /** Its store's writes start failing, as on a file system remounted read-only: how {@code lease} hears it. */
    private static LeaseLost lostToFailingWrites(LeaseStore store, Lease lease) throws Exception {
        store.files().beforeReplace(READ_ONLY);
        store.files().beforeSessionWrite(READ_ONLY);
        return lease.lost().get(Eventually.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aHolderWhoseRenewalsFailIsUnconfirmedAtThreeQuartersOfItsTtl() throws Exception {
        Duration ttl = Duration.ofSeconds(4);
        try (LeaseStore store = store(tmp.resolve("leases"), ttl)) {
            Identity holder = children.sleeping();
            Lease lease = ((Acquisition.Granted) store.acquire("build", holder)).lease();
            LeaseLost lost = lostToFailingWrites(store, lease);
            Instant heard = Instant.now();
            assertThat(lost.why()).isEqualTo(LeaseChange.UNCONFIRMED);
            Instant lastRenewed = store.read("build").orElseThrow().renewedAt();
            assertThat(Duration.between(lastRenewed, heard)).as("heard before its TTL ran out since its last renewal")
                    .isGreaterThanOrEqualTo(ttl.multipliedBy(3).dividedBy(4).minusMillis(50))
                    .isLessThan(ttl);
            assertThat(lease.isValid()).as("no write under it once it is unconfirmed").isFalse();
        }
    }

    /**
     * Its writes going through again, a holder told its grant was unconfirmed asks again and is granted it anew, at its
     * fence: that lease is kept, not told the loss of the grant as it was before; and told if the first lease, of the
     * same grant, releases it.
     */
    @Test
    void aHolderGrantedAgainAfterItsLossIsNotToldThatLossAgain() throws Exception {
        Duration ttl = Duration.ofSeconds(4);
        try (LeaseStore store = store(tmp.resolve("leases"), ttl)) {
            Identity holder = children.sleeping();
            Lease lease = ((Acquisition.Granted) store.acquire("build", holder)).lease();
            assertThat(lostToFailingWrites(store, lease).why()).isEqualTo(LeaseChange.UNCONFIRMED);
            store.files().beforeReplace(() -> { });
            store.files().beforeSessionWrite(() -> { });
            Acquisition again = store.acquire("build", holder);
            assertThat(again).as("%s", again).isInstanceOf(Acquisition.Granted.class);
            Lease anew = ((Acquisition.Granted) again).lease();
            assertThat(anew.fence()).isEqualTo(lease.fence());
            assertThat(anew.lost()).as("granted again, and kept").isNotDone();
            assertThat(anew.isValid()).isTrue();
            Thread.sleep(ttl.toMillis()); // a TTL on: its store keeps it
            assertThat(anew.lost()).as("kept a TTL on").isNotDone();
            assertThat(anew.isValid()).isTrue();
            assertThat(lease.lost()).as("the first lease's loss stays told").isDone();
            // released through the first lease, which is of the same grant: the lease granted again is told
            assertThat(lease.release()).isTrue();
            assertThat(anew.lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                    .why()).isEqualTo(LeaseChange.RELEASED);
            assertThat(anew.isValid()).isFalse();
        }
    }

    /**
     * A renewal confirms its grant as of the {@code renewedAt} it wrote, which newcomers judge by, not as
     * of when its slow write landed: else the holder would hear of its loss after a newcomer may take it.
     */
    @Test
    void aSlowRenewalConfirmsItsGrantAsOfItsRenewedAtNotItsLanding() throws Exception {
        Duration ttl = Duration.ofSeconds(4);
        try (LeaseStore store = store(tmp.resolve("leases"), ttl)) {
            store.files().beforeSessionWrite(READ_ONLY);
            Identity holder = children.sleeping();
            Lease lease = ((Acquisition.Granted) store.acquire("build", holder)).lease();
            // the renewal's write lands 2.5 s late: confirmed as of its landing, it would be lost at 5.5 s, past 3
            store.files().beforeReplace(() -> pause(Duration.ofMillis(2500)));
            LeaseRecord renewed = lease.renew();
            store.files().beforeReplace(() -> { });
            Instant lossDue = renewed.renewedAt().plus(ttl.multipliedBy(3).dividedBy(4));
            Instant after = lossDue.plusMillis(500);
            while (Instant.now().isBefore(after)) {
                Thread.sleep(Math.max(1, Duration.between(Instant.now(), after).toMillis()));
            }
            assertThat(store.files().lost("build", renewed.fence()))
                    .as("unconfirmed 3/4 of its TTL after the renewedAt it wrote, %s", renewed.renewedAt()).isTrue();
        }
    }

    private static void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A grant found unconfirmed is named by the session file on (its holder may still write under
     * it); once released, no more: a store's file does not name a grant it let go for good.
     */
    @Test
    void aGrantFoundUnconfirmedAndThenReleasedIsNoLongerNamedByTheSessionFile() throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        Path dir = tmp.resolve("leases");
        try (LeaseStore store = store(dir, ttl)) {
            Identity holder = children.sleeping();
            Lease lease = ((Acquisition.Granted) store.acquire("build", holder)).lease();
            store.files().beforeSessionWrite(READ_ONLY);
            LeaseLost lost = lease.lost().get(Eventually.scaled(Duration.ofSeconds(20)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(lost.why()).isEqualTo(LeaseChange.UNCONFIRMED);
            store.files().beforeSessionWrite(() -> { }); // the writes go through again
            Eventually.until("named by the session file again", Duration.ofSeconds(20),
                    () -> SessionFiles.keptAt(dir, "build", 1), at -> at.isAfter(Instant.EPOCH));
            assertThat(lease.release()).isTrue();
            Eventually.until("no longer named once released", Duration.ofSeconds(20),
                    () -> SessionFiles.keptAt(dir, "build", 1), at -> at.equals(Instant.EPOCH));
        }
    }
}
