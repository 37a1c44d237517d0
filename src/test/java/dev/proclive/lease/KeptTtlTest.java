package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory store keeps a grant by the TTL its record has now, whoever set it: the session file
 * that keeps it fresh is written every third of that TTL, and the grant is said lost only when that
 * TTL went unconfirmed for three quarters of it. A live holder kept here is never told lost because
 * a renewal changed the TTL (a wrong "lost": its writer steps down for nothing).
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class KeptTtlTest {

    @TempDir
    Path tmp;

    /** A short TTL, whole seconds, longer on a slow machine: a session file is written every third of it. */
    private static Duration shortTtl() {
        return Duration.ofSeconds(Math.max(3, (Eventually.scaled(Duration.ofSeconds(3)).toMillis() + 999) / 1000));
    }

    private static LeaseStore store(Path dir, Duration ttl) throws Exception {
        return LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(ttl).build()).build();
    }

    /** Waits two TTLs, long enough for a loss judged by the wrong TTL to be told, and asks that none was. */
    private static void keptFor(Lease lease, Duration ttl, String what) throws Exception {
        try {
            LeaseLost lost = lease.lost().get(ttl.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError(what + ": told lost: " + lost);
        } catch (java.util.concurrent.TimeoutException stillKept) {
            lease.ensureValid();
        }
    }

    /**
     * Claimed at a reservation's long TTL, then renewed by its own store at the store's short one:
     * the session file goes on by the short TTL (it stayed at the long one, written every 20 s, and
     * the grant was said lost three quarters of the short TTL after the renewal).
     */
    @Test
    void aGrantRenewedHereAtAShorterTtlIsKeptByIt() throws Exception {
        Path dir = tmp.resolve("leases");
        Duration ttl = shortTtl();
        Identity self = ProcLive.current().orElseThrow();
        try (LeaseStore reserving = store(dir, Duration.ofSeconds(60)); LeaseStore claiming = store(dir, ttl)) {
            Lease reserved = ((Acquisition.Granted) reserving.reserve("x", self)).lease();
            String token = reserved.token().orElseThrow();
            ProcessBuilder command = new ProcessBuilder("sleep", "600");
            command.environment().put(LeaseStore.TOKEN_VARIABLE, token);
            Process child = command.start();
            try {
                Identity childId = ProcLive.identify(child.pid()).orElseThrow();
                Lease lease = ((Acquisition.Granted) claiming.claim("x", token, childId)).lease();
                assertThat(claiming.read("x").orElseThrow().ttl()).as("a claim keeps the reservation's TTL")
                        .isEqualTo(Duration.ofSeconds(60));
                assertThat(lease.renew().ttl()).as("renewed at its store's TTL").isEqualTo(ttl);
                keptFor(lease, ttl, "renewed here at " + ttl);
            } finally {
                child.destroy();
                child.waitFor();
            }
        }
    }

    /**
     * Renewed elsewhere with a longer TTL ({@code lease renew --ttl 60}): the store that keeps it
     * judges its loss by the longer TTL, as newcomers now judge it (it kept judging by its own short
     * one, and said it lost while the session file, now written every 20 s, kept it fresh).
     */
    @Test
    void aGrantRenewedElsewhereAtALongerTtlIsJudgedByIt() throws Exception {
        Path dir = tmp.resolve("leases");
        Duration ttl = shortTtl();
        Identity self = ProcLive.current().orElseThrow();
        try (LeaseStore keeping = store(dir, ttl); LeaseStore elsewhere = store(dir, Duration.ofSeconds(60))) {
            Lease lease = ((Acquisition.Granted) keeping.acquire("x", self)).lease();
            assertThat(elsewhere.renew("x", lease.fence()).ttl()).isEqualTo(Duration.ofSeconds(60));
            keptFor(lease, ttl, "renewed elsewhere at 60 s");
        }
    }

    /**
     * Renewed elsewhere with a shorter TTL ({@code lease renew --ttl 3} of a grant kept at 60 s): that renewal confirms
     * the grant as the store's own writes do, and the session file goes on at the shorter TTL's rhythm (its old
     * confirmation was judged by the new TTL, and the holder was told lost at once while its session file kept the
     * lease from newcomers).
     */
    @Test
    void aGrantRenewedElsewhereAtAShorterTtlIsKeptByIt() throws Exception {
        Path dir = tmp.resolve("leases");
        Duration ttl = shortTtl();
        Identity self = ProcLive.current().orElseThrow();
        try (LeaseStore keeping = store(dir, Duration.ofSeconds(60)); LeaseStore newcomer = store(dir, ttl)) {
            Lease lease = ((Acquisition.Granted) keeping.acquire("x", self)).lease();
            Thread.sleep(ttl.toMillis()); // its last confirmation a whole short TTL old when the renewal comes
            try (LeaseStore elsewhere = store(dir, ttl)) {
                assertThat(elsewhere.renew("x", lease.fence()).ttl()).isEqualTo(ttl);
            }
            keptFor(lease, ttl, "renewed elsewhere at " + ttl);
            Process other = new ProcessBuilder("sleep", "600").start();
            try {
                assertThat(newcomer.acquire("x", ProcLive.identify(other.pid()).orElseThrow()))
                        .as("kept fresh for its live holder").isInstanceOf(Acquisition.Held.class);
            } finally {
                other.destroy();
                other.waitFor();
            }
        }
    }
}
