package dev.proclive.lease;

import dev.proclive.Eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Children;
import dev.proclive.Cli;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A held lease is a session, over a directory: it keeps itself, says when and why it is lost, and
 * a listener hears what other processes do to it. (On etcd: {@code EtcdLeaseIT}.)
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class LeaseSessionIT {

    @TempDir
    Path dir;
    final Children children = new Children();

    @AfterEach
    void killChildren() throws InterruptedException {
        children.killAll();
    }

    @Test
    void aLeaseIsStillThisJvmsThreeTtlsAndAHalfLaterWithoutACallOfRenew() throws Exception {
        // each keeping write must land within 5/12 of the TTL: two seconds on a quiet machine, scaled to this one
        Duration ttl = Eventually.scaled(Duration.ofSeconds(2));
        try (LeaseStore store = LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(ttl).build()).build()) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            Instant kept = Eventually.until("kept fresh three TTLs and a half after its grant, nobody calling renew()",
                    Duration.ofSeconds(40).plus(ttl.multipliedBy(4)), () -> SessionFiles.keptAt(dir, "build", lease.fence()),
                    at -> at.isAfter(lease.record().acquiredAt().plus(ttl.multipliedBy(7).dividedBy(2))));
            assertThat(kept).as("its store's session file names it, written within its last TTL")
                    .isAfter(Instant.now().minus(ttl));
            assertThat(store.read("build")).as("the record is not rewritten").contains(lease.record());
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.lost()).isNotDone();
            assertThat(lease.release()).isTrue();
        }
    }

    @Test
    void afterLeaseBreakItsLostCompletesWithinASecondSayingBroken() throws Exception {
        try (LeaseStore store = LeaseStore.open(dir)) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", ProcLive.current().orElseThrow())).lease();
            Cli.Result broke = Cli.run("lease", "break", "build", "--dir", dir.toString());
            long broken = System.nanoTime();
            assertThat(broke.exit()).as(broke.toString()).isZero();
            LeaseLost lost = lease.lost().get(30, TimeUnit.SECONDS);
            long after = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - broken);
            assertThat(lost.why()).isEqualTo(LeaseChange.BROKEN);
            assertThat(after).as("known %d ms after the break's process ended", after).isLessThanOrEqualTo(1_000);
            assertThat(lease.knownLost()).isTrue();
            assertThatThrownBy(lease::ensureValid).isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining("broken")
                    .satisfies(e -> assertThat(((LeaseLostException) e).lost().why()).isEqualTo(LeaseChange.BROKEN));
        }
    }

    @Test
    void aListenerSeesAnotherProcessGrantedThenReleased() throws Exception {
        Identity holder = ProcLive.identify(children.start("sleep", "60").pid()).orElseThrow();
        try (LeaseStore store = LeaseStore.open(dir)) {
            BlockingQueue<LeaseEvent> events = new LinkedBlockingQueue<>();
            try (AutoCloseable watch = store.watch("build", events::add)) {
                Cli.Result granted = Cli.run("lease", "acquire", "build", "--dir", dir.toString(), "--holder",
                        Long.toString(holder.pid()), "--print", "fence");
                assertThat(granted.exit()).as(granted.toString()).isZero();
                long fence = Long.parseLong(granted.out().strip());
                Cli.Result released = Cli.run("lease", "release", "build", "--dir", dir.toString(), "--fence",
                        Long.toString(fence));
                assertThat(released.exit()).as(released.toString()).isZero();

                LeaseEvent first = events.poll(10, TimeUnit.SECONDS);
                LeaseEvent second = events.poll(10, TimeUnit.SECONDS);
                assertThat(first).isNotNull();
                assertThat(first.kind()).isEqualTo(LeaseChange.GRANTED);
                assertThat(first.record().fence()).isEqualTo(fence);
                assertThat(second).isNotNull();
                assertThat(second.kind()).isEqualTo(LeaseChange.RELEASED);
                assertThat(second.record().fence()).isEqualTo(fence);
                assertThat(second.record().holder().pid()).isEqualTo(holder.pid());
            }
        }
    }
}
