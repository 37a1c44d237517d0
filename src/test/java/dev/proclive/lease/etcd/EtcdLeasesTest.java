package dev.proclive.lease.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.etcd.Etcd;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * This JVM's own etcd leases, shared by its writes: kept alive while a write may still put a record on one, let go
 * (revoked) once none has for a third of its TTL, and no longer handed out once etcd stops confirming it.
 */
class EtcdLeasesTest {

    /** Etcd leases a keep-alive is answered for; others are not answered (a member that does not reply). */
    private final Set<Long> answered = ConcurrentHashMap.newKeySet();
    private final List<Long> keptAlive = new CopyOnWriteArrayList<>();
    private final List<Long> revoked = new CopyOnWriteArrayList<>();
    private final AtomicLong lastLease = new AtomicLong(100);
    private final EtcdKeepAlive keepAlive = new EtcdKeepAlive(etcd(), "test keep-alive", Clock.systemUTC(),
            n -> n, n -> { });
    private final EtcdLeases leases = keepAlive.leases();

    @AfterEach
    void stop() {
        keepAlive.stop();
    }

    private Etcd etcd() {
        return (Etcd) Proxy.newProxyInstance(EtcdLeasesTest.class.getClassLoader(), new Class<?>[] {Etcd.class},
                (p, m, a) -> switch (m.getName()) {
                    case "keepAlive" -> {
                        long id = (Long) a[0];
                        keptAlive.add(id);
                        if (!answered.contains(id)) {
                            throw new IOException("no member answered (test)");
                        }
                        yield 1L;
                    }
                    case "grant" -> {
                        long id = lastLease.incrementAndGet();
                        answered.add(id);
                        yield id;
                    }
                    case "revoke" -> {
                        revoked.add((Long) a[0]);
                        yield null;
                    }
                    case "txn" -> new Etcd.Outcome(true, 5, List.of());
                    case "endpoints" -> "";
                    case "cluster" -> Optional.empty();
                    case "attached" -> Optional.empty();
                    case "close" -> null;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    /** Waits for {@code done}, up to 30 s (rounds come every third of the 1 s TTL): whether it came. */
    private static boolean within(BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    @Test
    void aLeaseAWriteStillWaitsOnIsKeptAliveAndLetGoOnceNoneHasUsedItForAThirdOfItsTtl() throws Exception {
        long lease = leases.shared(Duration.ofSeconds(1));
        assertThat(leases.alive(lease)).as("just granted").isTrue();
        assertThat(within(() -> keptAlive.stream().filter(id -> id == lease).count() >= 4))
                .as("kept alive, round after round, while a write may still put a record on it").isTrue();
        assertThat(revoked).as("never revoked under a write in flight").isEmpty();
        assertThat(leases.alive(lease)).isTrue();
        leases.answered(lease);
        assertThat(within(() -> revoked.contains(lease))).as("revoked once unused").isTrue();
        assertThat(leases.alive(lease)).as("let go: no longer this JVM's").isFalse();
        assertThat(leases.shared(Duration.ofSeconds(1))).as("a new one for the next write").isNotEqualTo(lease);
    }

    @Test
    void aLeaseEtcdStopsConfirmingIsNotAliveAfterThreeQuartersOfItsTtlAndNoWriteGetsItAgain() throws Exception {
        long lease = leases.shared(Duration.ofSeconds(1));
        assertThat(leases.alive(lease)).isTrue();
        assertThat(leases.shared(Duration.ofSeconds(1))).as("shared while it has more than half its TTL left")
                .isEqualTo(lease);
        answered.remove(lease);
        assertThat(within(() -> !leases.alive(lease))).as("unconfirmed past 3/4 of its TTL").isTrue();
        assertThat(leases.shared(Duration.ofSeconds(1))).as("never handed out again").isNotEqualTo(lease);
    }
}
