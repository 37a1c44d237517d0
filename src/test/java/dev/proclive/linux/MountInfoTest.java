package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
}
