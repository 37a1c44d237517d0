package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StatusFileTest {

    private static StatusFile parse(String fixture) {
        byte[] b = Fixtures.bytes("status/" + fixture);
        return StatusFile.parse(b, b.length);
    }

    @Test
    void readsTgidThreadsNspidAndCapabilities() {
        StatusFile s = parse("self.status");
        assertThat(s.tgid()).isPositive();
        assertThat(s.threads()).isEqualTo(1);
        assertThat(s.nspidCount()).isEqualTo(1);
        assertThat(s.capEff()).isEqualTo(0x1fffeffffffL);
        assertThat(s.canPtraceAny()).isTrue();
    }

    @Test
    void aThreadShowsItsProcessAsTgid() {
        assertThat(parse("thread-90-of-77.status").tgid()).isEqualTo(77);
    }

    @Test
    void countsThreadsOfAZombieMainThread() {
        assertThat(parse("zombie-with-threads.status").threads()).isEqualTo(3);
        assertThat(parse("zombie-alone.status").threads()).isEqualTo(1);
    }

    @Test
    void countsEveryIdOfANestedNamespace() {
        assertThat(parse("nested-nspid.status").nspidCount()).isEqualTo(2);
    }

    @Test
    void missingLinesReadAsMinusOne() {
        assertThat(parse("old-kernel-no-nspid.status").nspidCount()).isEqualTo(-1);
        StatusFile empty = StatusFile.parse(new byte[0], 0);
        assertThat(empty).isEqualTo(new StatusFile(-1, -1, -1, -1, -1));
        assertThat(empty.canPtraceAny()).isFalse();
    }

    @Test
    void withoutCapSysPtraceHiddenPidsStayHidden() {
        assertThat(parse("no-caps.status").canPtraceAny()).isFalse();
    }

    private static StatusFile of(String text) {
        byte[] b = text.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        return StatusFile.parse(b, b.length);
    }

    @Test
    void onlyCapSysPtraceCounts() {
        assertThat(of("CapEff:\t0000000000080000\n").canPtraceAny()).isTrue();
        assertThat(of("CapEff:\t0000000000040000\n").canPtraceAny()).isFalse();
        assertThat(of("CapEff:\t00000000000fffff\n").canPtraceAny()).isTrue();
        assertThat(of("CapEff:\t0000000000000000\n").canPtraceAny()).isFalse();
    }

    @Test
    void aCapabilityMaskThatDoesNotParseGrantsNothing() {
        assertThat(of("CapEff:\t00000000000g0000\n").capEff()).isEqualTo(-1);
        assertThat(of("CapEff:\t10000000000080000\n").capEff()).as("17 digits").isEqualTo(-1);
        assertThat(of("CapEff:\n").capEff()).isEqualTo(-1);
        assertThat(of("CapEff:\t00000000000g0000\n").canPtraceAny()).isFalse();
        assertThat(of("CapEff:\t7fffffffffffffff\n").capEff()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void linesAreMatchedByTheirWholeNameAndBlanksAreSkipped() {
        StatusFile s = of("Tgid:   \t 42\nThreads:\t7\nNSpid:\t 5  \t9\t 1\nTgi\nThreadsX:\t9\nNSpid\n");
        assertThat(s.tgid()).isEqualTo(42);
        assertThat(s.threads()).isEqualTo(7);
        assertThat(s.nspidCount()).isEqualTo(3);
        assertThat(of("NSpid:\t\n").nspidCount()).isZero();
        assertThat(of("Tgid:\t42").tgid()).as("the last line without a newline").isEqualTo(42);
        assertThat(of("Tgid:\t4x2\n").tgid()).isEqualTo(-1);
        assertThat(of("Tgid:\t42\nTgid:\t43\n").tgid()).as("a later line wins").isEqualTo(43);
    }

    @Test
    void onlyTheBytesGivenAreRead() {
        byte[] b = "Threads:\t12\n".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        assertThat(StatusFile.parse(b, b.length - 2).threads()).isEqualTo(1);
        assertThat(StatusFile.parse(b, 5).threads()).isEqualTo(-1);
    }
}
