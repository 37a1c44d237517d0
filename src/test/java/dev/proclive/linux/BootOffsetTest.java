package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The time-namespace offset: parsing {@code timens_offsets} and converting start times. */
class BootOffsetTest {

    @Test
    void theInitialNamespaceHasNoOffset() {
        assertThat(BootOffset.parse("monotonic           0         0\nboottime            0         0\n"))
                .contains(BootOffset.NONE);
        assertThat(BootOffset.NONE.none()).isTrue();
    }

    @Test
    void zeroOffsetsAreToldWithoutParsing() {
        assertThat(ProcMount.zeroBoottime("monotonic           0         0\nboottime            0         0\n")).isTrue();
        assertThat(ProcMount.zeroBoottime("boottime 0 0")).isTrue();
        assertThat(ProcMount.zeroBoottime("monotonic 5 0\nboottime 1000 0\n")).isFalse();
        assertThat(ProcMount.zeroBoottime("boottime 0 5")).isFalse();
        assertThat(ProcMount.zeroBoottime("boottime -0 0")).isFalse(); // left to the parser
        assertThat(ProcMount.zeroBoottime("boottime 0")).isFalse();
        assertThat(ProcMount.zeroBoottime("boottime 0 0 0")).isFalse();
        assertThat(ProcMount.zeroBoottime("monotonic 0 0\n")).isFalse();
        assertThat(ProcMount.zeroBoottime("")).isFalse();
    }

    @Test
    void wholeSecondsAreWholeTicks() {
        BootOffset offset = BootOffset.parse("monotonic 5 0\nboottime 1000 0\n").orElseThrow();
        assertThat(offset).isEqualTo(new BootOffset(100_000, false));
        assertThat(offset.none()).isFalse();
        assertThat(offset.fingerprint(100_018)).isEqualTo("18");
    }

    @Test
    void negativeOffsetsRoundDown() {
        assertThat(BootOffset.parse("boottime -2 500000000")).contains(new BootOffset(-150, false));
        assertThat(BootOffset.of(-1)).isEqualTo(new BootOffset(-1, true));
        assertThat(BootOffset.of(10_000_001)).isEqualTo(new BootOffset(1, true));
        assertThat(BootOffset.of(9_999_999)).isEqualTo(new BootOffset(0, true));
        assertThat(BootOffset.of(9_999_999).none()).isFalse();
    }

    @Test
    void onlyAnAmbiguousOffsetAcceptsTheTickBefore() {
        assertThat(new BootOffset(5, false).sameStart("17", "18")).isFalse();
        assertThat(new BootOffset(5, false).sameStart("18", "18")).isTrue();
        assertThat(new BootOffset(5, true).sameStart("17", "18")).isTrue();
        assertThat(new BootOffset(5, true).sameStart("19", "18")).isFalse();
        assertThat(new BootOffset(5, true).sameStart("16", "18")).isFalse();
        assertThat(new BootOffset(5, true).sameStart("17", "x")).isFalse();
    }

    /**
     * Recorded in a namespace whose offset has a fraction of a tick, a start may be the tick after the
     * true one, spelled as the kernel spells starts; a shown start past any uptime is one wrapped
     * around below zero.
     */
    @Test
    void aStartRecordedATickLateIsTheSameProcessAndAWrappedOneIsToldApart() {
        assertThat(BootOffset.recordedATickLate("19", "18")).isTrue();
        assertThat(BootOffset.recordedATickLate("17", "18")).isFalse();
        assertThat(BootOffset.recordedATickLate("20", "18")).isFalse();
        assertThat(BootOffset.recordedATickLate("9223372036854775807", "9223372036854775807")).isFalse();
        assertThat(BootOffset.recordedATickLate("x", "18")).isFalse();
        assertThat(BootOffset.recordedATickLate("+19", "18")).isFalse();
        assertThat(BootOffset.recordedATickLate("019", "18")).isFalse();
        assertThat(BootOffset.wrapped(1_844_679_418_311L)).isTrue();
        assertThat(BootOffset.wrapped(-1)).isTrue();
        assertThat(BootOffset.wrapped(5_010_941L)).isFalse();
        assertThat(BootOffset.wrapped(Long.MAX_VALUE / BootOffset.NANOS_PER_TICK)).isFalse();
    }

    @Test
    void fieldsAreSplitAtRunsOfSpacesAndTabs() {
        assertThat(BootOffset.parse("  boottime\t \t1000   0  \n")).contains(new BootOffset(100_000, false));
        assertThat(BootOffset.parse("boottime\t1000\t0")).contains(new BootOffset(100_000, false));
        assertThat(BootOffset.parse("boottime 1000 0 7")).as("four fields").isEmpty();
        assertThat(BootOffset.parse("boottime 1000")).as("two fields").isEmpty();
        assertThat(BootOffset.parse("boottime1000 0")).isEmpty();
    }

    @Test
    void malformedOffsetsAreRefused() {
        assertThat(BootOffset.parse("")).isEmpty();
        assertThat(BootOffset.parse("monotonic 0 0\n")).isEmpty();
        assertThat(BootOffset.parse("boottime 1 1000000000")).isEmpty();
        assertThat(BootOffset.parse("boottime 1 -1")).isEmpty();
        assertThat(BootOffset.parse("boottime x 0")).isEmpty();
        assertThat(BootOffset.parse("boottime 99999999999999999 0")).isEmpty();
    }
}
