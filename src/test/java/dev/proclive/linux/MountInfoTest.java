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

    /** One mountinfo line for a file system of {@code type} whose root {@code root} is mounted at {@code mountPoint}. */
    private static String mount(String root, String mountPoint, String type) {
        return "31 25 0:27 " + root + " " + mountPoint + " rw,nosuid,nodev,noexec,relatime shared:9 - " + type + " " + type + " rw\n";
    }

    @Test
    void theCgroupV2HierarchyIsTheLastCgroup2MountOfItsRoot() {
        String hybrid = mount("/", "/sys/fs/cgroup", "tmpfs") + mount("/", "/sys/fs/cgroup/systemd", "cgroup")
                + mount("/", "/sys/fs/cgroup/unified", "cgroup2");
        assertThat(MountInfo.cgroup2(hybrid)).isEqualTo("/sys/fs/cgroup/unified");
        assertThat(MountInfo.cgroup2(mount("/", "/sys/fs/cgroup", "cgroup2"))).isEqualTo("/sys/fs/cgroup");
        assertThat(MountInfo.cgroup2(mount("/", "/sys/fs/cgroup", "cgroup2") + mount("/", "/mnt/cg\\040two", "cgroup2")))
                .as("the last, its escapes undone").isEqualTo("/mnt/cg two");
        assertThat(MountInfo.cgroup2(mount("/user.slice", "/mnt/part", "cgroup2"))).as("a subtree bound elsewhere").isNull();
        assertThat(MountInfo.cgroup2(mount("/", "/sys/fs/cgroup", "cgroup"))).as("v1 only").isNull();
        assertThat(MountInfo.cgroup2("")).isNull();
        assertThat(MountInfo.cgroup2("31 25 0:27 / /sys/fs/cgroup rw cgroup2\n")).as("no separator").isNull();
        assertThat(MountInfo.cgroup2("31 25 0:27 / /sys/fs/cgroup rw -\n")).as("nothing after the separator").isNull();
        assertThat(MountInfo.cgroup2("31 - cgroup2\n")).as("too short").isNull();
    }

    @Test
    void linesCutShortAreSkippedNotFailed() {
        assertThat(MountInfo.hidesPids("25 1 0:23 / /proc rw - proc proc\n", "/proc")).as("no super options").isFalse();
        assertThat(MountInfo.hidesPids("25 1 0:23 / /proc rw - proc\n" + proc("/proc", "rw,hidepid=2"), "/proc")).isTrue();
        assertThat(MountInfo.hidesPids("25 - proc proc hidepid=2\n", "/proc")).as("too short").isFalse();
    }

    @Test
    void anEscapeAtEitherEndAndEveryOctalDigitAreUndone() {
        assertThat(MountInfo.unescape("\\040lead")).isEqualTo(" lead");
        assertThat(MountInfo.unescape("/seven\\067")).isEqualTo("/seven7");
        assertThat(MountInfo.unescape("/zero\\060")).isEqualTo("/zero0");
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
