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

    /**
     * A platform that answers every method, each with an answer of its own; a method added to the
     * SPI and not answered here fails the test that uses it.
     */
    static final ProcessIntrospector EVERYTHING = (ProcessIntrospector) java.lang.reflect.Proxy.newProxyInstance(
            ProcessIntrospector.class.getClassLoader(), new Class<?>[] {ProcessIntrospector.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "lookup", "lookupProcess" -> new ProcessLookup.Gone(method.getName() + " " + args[0]);
                case "self" -> new ProcessLookup.Gone("self");
                case "sameStart" -> args[0].equals("any");
                case "isFingerprint" -> args[0].equals("fingerprint");
                case "bootId" -> Optional.of("boot");
                case "hostName" -> Optional.of("host");
                case "machineId" -> Optional.of("machine");
                case "pidNamespace" -> Optional.of("ns");
                case "inInitialPidNamespace", "supported" -> false;
                case "isBootId" -> args[0].equals("boot");
                case "nameMatches" -> args[1].equals("any");
                default -> throw new UnsupportedOperationException(method.getName());
            });

    @Test
    void theInsideSeamPassesEveryAnswerOfAPlatformOnUnchanged() {
        KernelIntrospector k = KernelIntrospector.of(EVERYTHING);
        assertThat(k.lookup(3)).isEqualTo(new ProcessLookup.Gone("lookup 3"));
        assertThat(k.lookupProcess(3)).isEqualTo(new ProcessLookup.Gone("lookupProcess 3"));
        assertThat(k.self()).isEqualTo(new ProcessLookup.Gone("self"));
        assertThat(k.sameStart("any", "1")).isTrue();
        assertThat(k.sameStart("1", "1")).isFalse();
        assertThat(k.isFingerprint("fingerprint")).isTrue();
        assertThat(k.isFingerprint("1")).isFalse();
        assertThat(k.bootId()).contains("boot");
        assertThat(k.hostName()).contains("host");
        assertThat(k.machineId()).contains("machine");
        assertThat(k.pidNamespace()).contains("ns");
        assertThat(k.inInitialPidNamespace()).isFalse();
        assertThat(KernelIntrospector.of(MINIMAL).inInitialPidNamespace()).isTrue(); // a platform without PID namespaces
        assertThat(k.supported()).isFalse();
        assertThat(KernelIntrospector.of(MINIMAL).supported()).isTrue();
        assertThat(k.isBootId("boot")).isTrue();
        assertThat(k.isBootId("BOOT")).isFalse();
        // what only the lease asks is no platform's answer: the inside seam's defaults
        assertThat(k.startFloor()).isEmpty();
        assertThat(k.userId(7)).isEmpty();
        assertThat(k.nameMatches("x", "any")).isTrue();
        assertThat(k.nameMatches("x", "x")).isFalse();
    }

    @Test
    void aPlainPlatformReadsNoEnvironmentTracksNothingAndTellsNoExitStatus() {
        KernelIntrospector k = KernelIntrospector.of(MINIMAL);
        dev.proclive.spi.internal.EnvironmentScan scan = k.scanEnvironments("V", v -> true, 0, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.detail()).contains("cannot read other processes' environments");
        dev.proclive.spi.internal.EnvironmentScan one = k.readEnvironment(7, "V", v -> true);
        assertThat(one.complete()).isFalse();
        assertThat(one.detail()).contains("cannot read other processes' environments");
        assertThat(k.openExitEvents()).isEmpty();
        assertThat(dev.proclive.spi.internal.Descendants.NONE.becomeSubreaper()).isFalse();
        assertThat(new dev.proclive.spi.internal.ExitEvents() {
            @Override
            public Registration watch(long pid) {
                return new Registration.Unavailable("");
            }

            @Override
            public void unwatch(long handle) {
            }

            @Override
            public int await(long timeoutMillis, long[] ready) {
                return 0;
            }

            @Override
            public void wake() {
            }

            @Override
            public void close() {
            }
        }.tellsExitStatus()).isFalse();
    }

    @Test
    void lookupProcessIsLookupUnlessAPlatformSaysOtherwise() {
        assertThat(MINIMAL.lookupProcess(7)).isEqualTo(MINIMAL.lookup(7));
    }

    @Test
    void aPlainDecimalIsWrittenAsCPrintsANumber() {
        for (String plain : new String[] {"0", "7", "285663", "9223372036854775807"}) {
            assertThat(KernelIntrospector.isPlainDecimal(plain, 0, plain.length(), 19)).as(plain).isTrue();
        }
        for (String other : new String[] {"", "0285663", "00", "+285663", "-1", " 1", "1 ", "1.0", "\u0661",
                "\uff11", "12345678901234567890"}) {
            assertThat(KernelIntrospector.isPlainDecimal(other, 0, other.length(), 19)).as(other).isFalse();
        }
        assertThat(KernelIntrospector.isPlainDecimal("x12.5", 1, 3, 19)).isTrue();
        assertThat(KernelIntrospector.isPlainDecimal("x02.5", 1, 3, 19)).isFalse();
        assertThat(KernelIntrospector.isPlainDecimal("12", 0, 3, 19)).isFalse();
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
