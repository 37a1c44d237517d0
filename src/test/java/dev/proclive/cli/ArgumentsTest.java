package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The one PID parser and the one seconds parser of the command line. */
class ArgumentsTest {

    @Test
    void aPidIsAsciiDigitsWithAnOptionalMinusWithin64Bits() {
        assertThat(Arguments.pid("42")).isEqualTo(42);
        assertThat(Arguments.pid("-5")).isEqualTo(-5);
        assertThat(Arguments.pid("9223372036854775807")).isEqualTo(Long.MAX_VALUE);
        for (String bad : new String[] {"", "-", "+1", "1.0", "\u0661", "\uff11", "9223372036854775808", " 1"}) {
            assertThatThrownBy(() -> Arguments.pid(bad)).as(bad).isInstanceOf(BadInput.class)
                    .hasMessageContaining("PID must be a 64-bit whole number in ASCII digits");
        }
    }

    @Test
    void wholeSecondsAtLeastTheMinimum() {
        assertThat(Arguments.seconds("--ttl", "30", false, 1)).isEqualTo(Duration.ofSeconds(30));
        assertThat(Arguments.seconds("--wait", "0", false, 0)).isEqualTo(Duration.ZERO);
        assertThat(Arguments.seconds("--wait", "999999999", false, 0)).isEqualTo(Duration.ofSeconds(999_999_999));
        assertThatThrownBy(() -> Arguments.seconds("--ttl", "0", false, 1))
                .hasMessage("--ttl is a whole number of seconds above 0, not \"0\"");
        for (String bad : new String[] {"", "0.5", "-1", "1e3", "\u0663"}) {
            assertThatThrownBy(() -> Arguments.seconds("--wait", bad, false, 0)).as(bad)
                    .isInstanceOf(Options.Usage.class).hasMessage("--wait is a whole number of seconds, not \"" + bad + "\"");
        }
        for (String tooLong : new String[] {"1000000000", "2147483647"}) {
            assertThatThrownBy(() -> Arguments.seconds("--wait", tooLong, false, 0)).as(tooLong)
                    .hasMessage("--wait is a whole number of seconds, at most 999999999 (nine digits), not \"" + tooLong + "\"");
        }
    }

    @Test
    void secondsWithUpToThreeDecimalsWhereFractionsAreTaken() {
        assertThat(Arguments.seconds("--timeout", "0.5", true, 0)).isEqualTo(Duration.ofMillis(500));
        assertThat(Arguments.seconds("--timeout", "1.25", true, 0)).isEqualTo(Duration.ofMillis(1250));
        assertThat(Arguments.seconds("--timeout", "2.001", true, 0)).isEqualTo(Duration.ofMillis(2001));
        assertThat(Arguments.seconds("--timeout", "7", true, 0)).isEqualTo(Duration.ofSeconds(7));
        assertThatThrownBy(() -> Arguments.seconds("--timeout", "1234567890", true, 0))
                .hasMessage("--timeout is a number of seconds such as 30 or 0.5, at most 999999999 (nine digits), not"
                        + " \"1234567890\"");
        for (String bad : new String[] {"1.", ".5", "1.2345", "1..2", "1.x", "-0.5", ""}) {
            assertThatThrownBy(() -> Arguments.seconds("--timeout", bad, true, 0)).as(bad)
                    .hasMessage("--timeout is a number of seconds such as 30 or 0.5, not \"" + bad + "\"");
        }
    }
}
