package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The kinfo_proc decoder over synthetic buffers: runs on every OS. */
class KinfoProcTest {

    @Test
    void decodesANormalProcess() {
        byte[] b = KinfoProcBuilder.process(4242).ppid(777).start(1_700_000_123L, 456_789).uid(501).bytes;
        assertThat(KinfoProc.check(b, KinfoProc.SIZE, 4242)).isEqualTo(KinfoProc.Status.VALID);
        assertThat(KinfoProc.decode(b))
                .isEqualTo(new KinfoProc(4242, 777, "node", "1700000123.456789", false, 501));
    }

    @Test
    void theUserIsUnsigned() {
        assertThat(KinfoProc.decode(KinfoProcBuilder.process(9).uid(0).bytes).uid()).isZero();
        assertThat(KinfoProc.decode(KinfoProcBuilder.process(9).uid(-2).bytes).uid()).isEqualTo(4294967294L); // nobody
    }

    @Test
    void aZombieHasStatSzomb() {
        assertThat(KinfoProc.decode(KinfoProcBuilder.process(9).stat(5).bytes).zombie()).isTrue();
        for (int stat : new int[] {1, 2, 3, 4}) { // SIDL SRUN SSLEEP SSTOP
            assertThat(KinfoProc.decode(KinfoProcBuilder.process(9).stat(stat).bytes).zombie()).isFalse();
        }
    }

    @Test
    void aSixteenByteNameWithoutNulIsReadWhole() {
        byte[] b = KinfoProcBuilder.process(9).comm("abcdefghijklmnop").bytes; // 16 bytes, then NUL
        assertThat(KinfoProc.decode(b).name()).isEqualTo("abcdefghijklmnop");
    }

    @Test
    void aNameFillingAllSeventeenBytesStopsAtTheField() {
        byte[] b = KinfoProcBuilder.process(9).comm("abcdefghijklmnopq").bytes;
        b[KinfoProc.P_COMM + KinfoProc.P_COMM_LENGTH] = 'X'; // the next field is not part of the name
        assertThat(KinfoProc.decode(b).name()).isEqualTo("abcdefghijklmnopq");
    }

    @Test
    void nonAsciiNamesAreUtf8AndBrokenBytesAreReplaced() {
        assertThat(KinfoProc.decode(KinfoProcBuilder.process(9).comm("naïve-日本").bytes).name())
                .isEqualTo("naïve-日本");
        byte[] broken = {'a', (byte) 0xff, 'b'};
        assertThat(KinfoProc.decode(KinfoProcBuilder.process(9).comm(broken).bytes).name()).isEqualTo("a\uFFFDb");
        byte[] cut = "ab日".getBytes(StandardCharsets.UTF_8);
        byte[] half = {cut[0], cut[1], cut[2], cut[3]}; // the last character cut in two
        assertThat(KinfoProc.decode(KinfoProcBuilder.process(9).comm(half).bytes).name()).isEqualTo("ab\uFFFD");
    }

    @Test
    void lengthZeroMeansNoSuchProcess() {
        assertThat(KinfoProc.check(new byte[KinfoProc.SIZE], 0, 9)).isEqualTo(KinfoProc.Status.NO_PROCESS);
    }

    @Test
    void anAnswerForAnotherPidIsRefused() {
        assertThat(KinfoProc.check(KinfoProcBuilder.process(10).bytes, KinfoProc.SIZE, 9))
                .isEqualTo(KinfoProc.Status.OTHER_PID);
    }

    @ParameterizedTest
    @CsvSource({"647", "1", "492", "649"})
    void anyOtherLengthIsRefused(int length) {
        assertThat(KinfoProc.check(KinfoProcBuilder.process(9).bytes, length, 9))
                .isEqualTo(KinfoProc.Status.WRONG_LENGTH);
    }

    @Test
    void aShortBufferIsRefusedNotReadPastItsEnd() {
        assertThat(KinfoProc.check(new byte[100], KinfoProc.SIZE, 9)).isEqualTo(KinfoProc.Status.WRONG_LENGTH);
        assertThatThrownBy(() -> KinfoProc.decode(new byte[KinfoProc.SIZE - 1]))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({
            "1700000000, 0,       1700000000.000000",
            "1700000000, 7,       1700000000.000007",
            "1700000000, 999999,  1700000000.999999",
            "0,          123456,  0.123456",
            "-1,         5,       -1.000005",
            "5,          -5,      5.-00005",
    })
    void theFingerprintIsGosPercentDDotPercent06D(long seconds, int micros, String expected) {
        assertThat(KinfoProc.startFingerprint(seconds, micros)).isEqualTo(expected);
    }
}
