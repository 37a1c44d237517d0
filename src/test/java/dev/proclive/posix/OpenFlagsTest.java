package dev.proclive.posix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The open(2) flags per OS and CPU, as the kernel headers define them. */
class OpenFlagsTest {

    @Test
    void linuxOnX86HasNoFollowAt0400000AndOnArmAt0100000() {
        int cloexecNonblock = 02000000 | 04000;
        assertThat(OpenFlags.readOnlyNoFollow("linux", "x86-64")).hasValue(0400000 | cloexecNonblock);
        assertThat(OpenFlags.readOnlyNoFollow("linux", "riscv64")).hasValue(0400000 | cloexecNonblock);
        assertThat(OpenFlags.readOnlyNoFollow("linux", "aarch64")).hasValue(0100000 | cloexecNonblock);
        assertThat(OpenFlags.readOnlyNoFollow("linux", "ppc64le")).hasValue(0100000 | cloexecNonblock);
    }

    @Test
    void macosHasItsOwnValues() {
        assertThat(OpenFlags.readOnlyNoFollow("mac", "aarch64")).hasValue(0x100 | 0x1000000 | 0x4);
        assertThat(OpenFlags.readOnlyNoFollow("mac", "x86-64")).hasValue(0x100 | 0x1000000 | 0x4);
    }

    @Test
    void anUnknownCpuOrOsHasNone() {
        assertThat(OpenFlags.readOnlyNoFollow("linux", "mips")).isEmpty();
        assertThat(OpenFlags.readOnlyNoFollow("other", "x86-64")).isEmpty();
    }
}
