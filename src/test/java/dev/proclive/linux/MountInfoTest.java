package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class MountInfoTest {

    @ParameterizedTest
    @CsvSource({
            "plain.mountinfo,                     false",
            "hidepid-invisible-stacked.mountinfo, true",
            "hidepid-numeric.mountinfo,           true",
            "hidepid-noaccess.mountinfo,          true",
            "hidepid-off.mountinfo,               false",
            "subset-pid.mountinfo,                true",
            "hidepid-elsewhere.mountinfo,         false",
    })
    void tellsWhetherTheTopmostProcMountHidesPids(String fixture, boolean hides) {
        assertThat(MountInfo.hidesPids(Fixtures.text("mountinfo/" + fixture), "/proc")).isEqualTo(hides);
    }

    @ParameterizedTest
    @CsvSource({
            "hidepid-elsewhere.mountinfo, /mnt/other proc, true",
            "hidepid-elsewhere.mountinfo, /mnt,            false",
    })
    void matchesTheMountPointWithItsOctalEscapes(String fixture, String mountPoint, boolean hides) {
        assertThat(MountInfo.hidesPids(Fixtures.text("mountinfo/" + fixture), mountPoint)).isEqualTo(hides);
    }

    /** One mountinfo line for a procfs at {@code mountPoint} with these super options. */
    private static String proc(String mountPoint, String options) {
        return "25 1 0:23 / " + mountPoint + " rw,nosuid,nodev,noexec,relatime shared:12 - proc proc " + options + "\n";
    }

    @Test
    void escapesOfEveryKindAreUndone() {
        assertThat(MountInfo.unescape("/a\\040b")).isEqualTo("/a b");
        assertThat(MountInfo.unescape("/tab\\011x\\012y\\134z")).isEqualTo("/tab\tx\ny\\z");
        assertThat(MountInfo.unescape("/end\\040")).isEqualTo("/end ");
        assertThat(MountInfo.unescape("/not\\08x")).isEqualTo("/not\\08x");   // 8 is not octal
        assertThat(MountInfo.unescape("/short\\04")).isEqualTo("/short\\04");  // cut short
        assertThat(MountInfo.unescape("/plain")).isEqualTo("/plain");
    }

    @Test
    void onlyAProcfsAtThatMountPointCounts() {
        assertThat(MountInfo.hidesPids(proc("/proc", "rw,hidepid=invisible"), "/proc")).isTrue();
        assertThat(MountInfo.hidesPids(proc("/proc", "rw,hidepid=invisible"), "/proc2")).isFalse();
        String tmpfs = "25 1 0:23 / /proc rw shared:12 - tmpfs tmpfs rw,hidepid=2\n";
        assertThat(MountInfo.hidesPids(tmpfs, "/proc")).as("not procfs").isFalse();
    }

    @Test
    void theLastMountOnTopWins() {
        assertThat(MountInfo.hidesPids(proc("/proc", "rw,hidepid=2") + proc("/proc", "rw"), "/proc")).isFalse();
        assertThat(MountInfo.hidesPids(proc("/proc", "rw") + proc("/proc", "rw,subset=pid"), "/proc")).isTrue();
        assertThat(MountInfo.hidesPids(proc("/proc", "rw,hidepid=off"), "/proc")).isFalse();
        assertThat(MountInfo.hidesPids(proc("/proc", "rw,hidepid=0"), "/proc")).isFalse();
        assertThat(MountInfo.hidesPids(proc("/proc", "rw,hidepid=4"), "/proc")).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "25 1 0:23 / /proc - proc proc rw,hidepid=2",       // the separator among the first six fields
            "25 1 0:23 / /proc rw - proc",                      // nothing after the type
            "25 1 0:23 / /proc rw shared:1 proc proc rw,hidepid=2", // no separator at all
            "25 1 0:23 /",                                      // too short
            ""})
    void malformedLinesAreIgnored(String line) {
        assertThat(MountInfo.hidesPids(line + "\n", "/proc")).isFalse();
    }

    @Test
    void optionalFieldsMayBeMany() {
        String line = "25 1 0:23 / /proc rw shared:12 master:3 propagate_from:4 - proc proc rw,hidepid=2\n";
        assertThat(MountInfo.hidesPids(line, "/proc")).isTrue();
        String none = "25 1 0:23 / /proc rw - proc proc rw,hidepid=2\n";
        assertThat(MountInfo.hidesPids(none, "/proc")).isTrue();
    }
}
