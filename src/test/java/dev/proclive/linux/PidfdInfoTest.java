package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** {@code struct pidfd_info} as {@code PIDFD_GET_INFO} fills it, decoded from bytes, on every OS. */
class PidfdInfoTest {

    private static byte[] info(long mask, int exitCode) {
        ByteBuffer b = ByteBuffer.allocate(PidfdEvents.INFO_SIZE).order(ByteOrder.nativeOrder());
        b.putLong(0, mask);
        b.putInt(PidfdEvents.EXIT_CODE_OFFSET, exitCode);
        return b.array();
    }

    @Test
    void theExitCodeCountsOnlyWhenTheMaskSaysTheKernelFilledIt() {
        assertThat(PidfdEvents.exitCode(info(0x7, 0))).as("alive, or not reaped yet: pid, creds, cgroup").isEmpty();
        assertThat(PidfdEvents.exitCode(info(0xc, 9))).hasValue(9);
        assertThat(PidfdEvents.exitCode(info(0xc, 768))).hasValue(768);
    }

    @Test
    void theIoctlIsReadWriteOfTheFirstPublishedSize() {
        assertThat(PidfdEvents.PIDFD_GET_INFO).isEqualTo((3L << 30) | (64L << 16) | (0xFFL << 8) | 11);
        assertThat(PidfdEvents.EXIT_CODE_OFFSET).as("after two u64 and eleven u32").isEqualTo(16 + 11 * 4);
    }

    @Test
    void kernelReleasesAreComparedByMajorAndMinor() {
        assertThat(PidfdEvents.kernelAtLeast("6.18.44-fc-v1045", 6, 15)).isTrue();
        assertThat(PidfdEvents.kernelAtLeast("6.15.0", 6, 15)).isTrue();
        assertThat(PidfdEvents.kernelAtLeast("6.14.11-300.fc42.x86_64", 6, 15)).isFalse();
        assertThat(PidfdEvents.kernelAtLeast("5.19.0", 6, 15)).isFalse();
        assertThat(PidfdEvents.kernelAtLeast("7.0.1", 6, 15)).isTrue();
        assertThat(PidfdEvents.kernelAtLeast("", 6, 15)).isFalse();
        assertThat(PidfdEvents.kernelAtLeast("garbage", 6, 15)).isFalse();
    }
}
