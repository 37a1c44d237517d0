package dev.proclive.spi;

import dev.proclive.spi.internal.KernelIntrospector;
import dev.proclive.spi.internal.ProgramNames;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Reason;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the SPI gives a platform that overrides nothing but what it must. */
class IntrospectorDefaultsTest {

    /** A platform that knows one process and nothing else. */
    static final ProcessIntrospector MINIMAL = new ProcessIntrospector() {
        @Override
        public ProcessLookup lookup(long pid) {
            return pid == 7 ? new ProcessLookup.Found(new ProcessInfo(7, 1, "seven", "70", ProcessState.LIVE))
                    : new ProcessLookup.Gone("");
        }

        @Override
        public ProcessLookup self() {
            return lookup(7);
        }

        @Override
        public Optional<String> bootId() {
            return Optional.empty();
        }

        @Override
        public Optional<String> hostName() {
            return Optional.of("h");
        }

        @Override
        public Optional<String> pidNamespace() {
            return Optional.empty();
        }
    };

    @Test
    void lookupProcessIsLookupUnlessAPlatformSaysOtherwise() {
        assertThat(MINIMAL.lookupProcess(7)).isEqualTo(MINIMAL.lookup(7));
    }

    @Test
    void noProgramNamesAreKnownByDefault() {
        assertThat(KernelIntrospector.of(MINIMAL).programNames(7)).isSameAs(ProgramNames.UNKNOWN);
    }

    @Test
    void startsMatchOnlyWhenEqualByDefault() {
        assertThat(MINIMAL.sameStart("70", "70")).isTrue();
        assertThat(MINIMAL.sameStart("69", "70")).isFalse();
    }

    @Test
    void namesAreKeptWholeByDefault() {
        String longName = "a-name-much-longer-than-any-kernel-keeps";
        assertThat(MINIMAL.nameMatches(longName, longName)).isTrue();
        assertThat(MINIMAL.nameMatches(longName.substring(0, 15), longName)).isFalse();
        assertThat(MINIMAL.nameMatches("sh", "bash")).isFalse();
    }

    @Test
    void lookupDetailsAreNeverNull() {
        assertThat(new ProcessLookup.Gone(null).detail()).isEmpty();
        assertThat(new ProcessLookup.Unknown(Reason.IO_ERROR, null).detail()).isEmpty();
        assertThat(new ProcessLookup.Gone("x").detail()).isEqualTo("x");
        assertThat(new ProcessLookup.Unknown(Reason.IO_ERROR, "y").detail()).isEqualTo("y");
        assertThatThrownBy(() -> new ProcessLookup.Unknown(Reason.EXITED, "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ProcessLookup.Found(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void programNamesKeepTheLastPathComponent() {
        assertThat(ProgramNames.fileName("/usr/bin/bash")).isEqualTo("bash");
        assertThat(ProgramNames.fileName("bash")).isEqualTo("bash");
        assertThat(ProgramNames.fileName("/")).isEmpty();
        assertThatThrownBy(() -> new ProgramNames(null, "")).isInstanceOf(NullPointerException.class);
    }
}
