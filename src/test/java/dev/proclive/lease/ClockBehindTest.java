package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.lease.core.Pause;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.spi.internal.KernelIntrospector;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Over a directory, a holder whose clock is behind the newcomer's writes times that look old: it is
 * fresh all the same while its store keeps it, as the change times of its files (stamped by the
 * file system's clock, which a newcomer measures against its own) tell. Real time, real files.
 */
class ClockBehindTest {

    @TempDir
    Path dir;

    /** A checker that sees this machine as another host sees it: every holder here is UNKNOWN. */
    private static LivenessChecker fromAnotherHost() {
        KernelIntrospector real = KernelIntrospector.of(LivenessChecker.system().introspector());
        return LivenessChecker.of((KernelIntrospector) Proxy.newProxyInstance(KernelIntrospector.class.getClassLoader(),
                new Class<?>[] {KernelIntrospector.class}, (proxy, method, args) -> {
                    if (method.getName().equals("hostName") || method.getName().equals("machineId")) {
                        return Optional.of("elsewhere");
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                }));
    }

    @Test
    void aHolderWhoseClockIsBehindIsNotTakenWhileItsStoreKeepsIt() throws Exception {
        Duration ttl = Duration.ofMillis((long) (3000 * Eventually.slowness()));
        Identity me = ProcLive.current().orElseThrow();
        try (LeaseStore behind = LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(ttl).build())
                .checker(LivenessChecker.system()).clock(Clock.offset(Clock.systemUTC(), Duration.ofSeconds(-40)))
                .pause(Pause.REAL).descendants(Descendants.NONE).build()) {
            Lease held = ((Acquisition.Granted) behind.acquire("build", me)).lease();
            Thread.sleep(ttl.multipliedBy(2).toMillis()); // its record's own write is a TTL old: its session keeps it
            assertThat(held.isValid()).as("kept by its store").isTrue();
            LivenessChecker elsewhere = fromAnotherHost();
            try (LeaseStore newcomer = LeaseStore.builder().directory(dir)
                    .policy(LeasePolicy.builder().ttl(ttl).takeUnknownAfterTtl(true).build()).checker(elsewhere)
                    .clock(Clock.systemUTC()).pause(Pause.REAL).descendants(Descendants.NONE).build()) {
                Acquisition a = newcomer.acquire("build", elsewhere.current().orElseThrow());
                assertThat(a).as("no second writer while the holder is kept").isInstanceOf(Acquisition.Undecided.class);
            }
            assertThat(held.isValid()).isTrue();
            assertThat(held.release()).isTrue();
        }
    }
}
