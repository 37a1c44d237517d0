package dev.proclive.lease.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How a waiter in the queue backs off between looks. */
class WaitingTest {

    /** A wait of any length ({@code acquire --wait} for hours) backs off to the cap, stays there, never overflows. */
    @Test
    void aRecheckBacksOffToItsCapAndStaysThere() {
        Duration cap = Duration.ofSeconds(2);
        Duration recheck = Duration.ofMillis(25);
        for (int look = 0; look < 10_000; look++) {
            recheck = Waiting.doubled(recheck, cap);
            assertThat(recheck).isLessThanOrEqualTo(cap).isPositive();
        }
        assertThat(recheck).isEqualTo(cap);
        assertThat(Waiting.doubled(Duration.ofMillis(25), cap)).isEqualTo(Duration.ofMillis(50));
        assertThat(Waiting.doubled(Duration.ofMillis(1500), cap)).isEqualTo(cap);
    }
}
