package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A policy is a value: a setting makes a changed copy, and whoever shares the policy keeps it as it was. */
class LeasePolicyTest {

    @Test
    void aSettingReturnsACopyAndLeavesThePolicyItWasCalledOnAsItWas() {
        var shared = LeasePolicy.builder().takeUnknownAfterTtl(true);

        var longer = shared.ttl(Duration.ofMinutes(2));
        var untracked = shared.trackDescendants(false);
        var cautious = shared.takeUnknownAfterTtl(false);

        assertThat(longer).isNotSameAs(shared);
        assertThat(longer.build().ttl()).isEqualTo(Duration.ofMinutes(2));
        assertThat(longer.build().renewalTtl()).contains(Duration.ofMinutes(2));
        assertThat(longer.build().takeUnknownAfterTtl()).isTrue();
        assertThat(untracked.build().trackDescendants()).isFalse();
        assertThat(cautious.build().takeUnknownAfterTtl()).isFalse();
        // the policy every setting was called on is the one it was, and so are the defaults
        assertThat(shared.build().ttl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(shared.build().renewalTtl()).isEmpty();
        assertThat(shared.build().trackDescendants()).isTrue();
        assertThat(shared.build().takeUnknownAfterTtl()).isTrue();
        assertThat(LeasePolicy.builder().build()).isEqualTo(LeasePolicy.defaults());
        assertThat(LeasePolicy.defaults().takeUnknownAfterTtl()).isFalse();
        // a TTL set explicitly stays explicit through the settings after it
        assertThat(longer.trackDescendants(false).build().renewalTtl()).contains(Duration.ofMinutes(2));
    }

    @Test
    void aTtlThatIsNotPositiveWholeMillisecondsIsRefusedAsBefore() {
        assertThatThrownBy(() -> LeasePolicy.builder().ttl(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl must be positive, got PT0S");
        assertThatThrownBy(() -> LeasePolicy.builder().ttl(Duration.ofSeconds(-1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl must be positive, got PT-1S");
        assertThatThrownBy(() -> LeasePolicy.builder().ttl(Duration.ofNanos(1_500_000)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ttl is kept in whole milliseconds, got PT0.0015S");
        assertThatThrownBy(() -> LeasePolicy.builder().ttl(Duration.ofDays(110_000)).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ttl must be at most 999999999 s (about 31 years), got PT2640000H");
        assertThatThrownBy(() -> LeasePolicy.builder().ttl(Duration.ofSeconds(999_999_999).plusMillis(1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("ttl must be at most 999999999 s");
        assertThat(LeasePolicy.builder().ttl(Duration.ofSeconds(999_999_999)).build().ttl())
                .isEqualTo(Duration.ofSeconds(999_999_999));
        assertThatThrownBy(() -> LeasePolicy.builder().ttl(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("ttl");
    }
}
