package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The {@code struct kevent} layout of 64-bit macOS, bytes in and out, on every OS. */
class KEventTest {

    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", ""));
    }

    @Test
    void aWatchForAnExitIsLaidOutAsTheKernelReadsIt() {
        // ident 4242 | filter -5 | flags EV_ADD|EV_RECEIPT | fflags NOTE_EXIT | data 0 | udata 0
        assertThat(KEvent.watchExit(4242).bytes()).isEqualTo(hex(
                "9210000000000000 fbff 4100 00000080 0000000000000000 0000000000000000"));
        assertThat(KEvent.unwatchExit(4242).bytes()).isEqualTo(hex(
                "9210000000000000 fbff 4200 00000000 0000000000000000 0000000000000000"));
        assertThat(KEvent.addWake().bytes()).isEqualTo(hex(
                "0000000000000000 f6ff 2100 00000000 0000000000000000 0000000000000000"));
        assertThat(KEvent.triggerWake().bytes()).isEqualTo(hex(
                "0000000000000000 f6ff 0000 00000001 0000000000000000 0000000000000000"));
    }

    @Test
    void answersDecode() {
        ByteBuffer two = ByteBuffer.wrap(hex(
                // a receipt: EV_ERROR with errno 3 (ESRCH) in data
                "9210000000000000 fbff 0140 00000080 0300000000000000 0000000000000000"
                // an exit: EV_EOF|EV_ONESHOT, NOTE_EXIT with the exit status in data
                + "9310000000000000 fbff 1080 00000080 0001000000000000 0000000000000000"));
        KEvent receipt = KEvent.decode(two, 0);
        assertThat(receipt.ident()).isEqualTo(4242);
        assertThat(receipt.failed()).isTrue();
        assertThat(receipt.data()).isEqualTo(3);
        assertThat(receipt.exited()).as("a receipt is no exit").isFalse();
        KEvent exit = KEvent.decode(two, KEvent.SIZE);
        assertThat(exit.ident()).isEqualTo(4243);
        assertThat(exit.filter()).isEqualTo(KEvent.EVFILT_PROC);
        assertThat(exit.flags()).isEqualTo(0x8010);
        assertThat(exit.exited()).isTrue();
        assertThat(exit.failed()).isFalse();
        assertThat(KEvent.decode(ByteBuffer.wrap(KEvent.triggerWake().bytes()), 0)).isEqualTo(KEvent.triggerWake());
    }

    @Test
    void aReceiptWithoutAnErrorIsNoFailure() {
        KEvent ok = new KEvent(4242, KEvent.EVFILT_PROC, KEvent.EV_ERROR, 0, 0, 0);
        assertThat(ok.failed()).isFalse();
        assertThat(ok.exited()).isFalse();
    }
}
