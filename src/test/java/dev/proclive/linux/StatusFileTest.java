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
        assertThat(empty).isEqualTo(new StatusFile(-1, -1, -1, -1));
        assertThat(empty.canPtraceAny()).isFalse();
    }

    @Test
    void withoutCapSysPtraceHiddenPidsStayHidden() {
        assertThat(parse("no-caps.status").canPtraceAny()).isFalse();
    }
}
