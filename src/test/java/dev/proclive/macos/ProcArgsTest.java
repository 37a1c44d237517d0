package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.spi.ProgramNames;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** {@code KERN_PROCARGS2} answers built byte by byte, decoded on every OS. */
class ProcArgsTest {

    /** argc, the executable path, NUL padding to 8 bytes, then argv and an environment. */
    static byte[] procArgs(int argc, String executable, String... argv) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(argc).array());
        out.writeBytes(executable.getBytes(StandardCharsets.UTF_8));
        do {
            out.write(0);
        } while (out.size() % 8 != 0);
        for (String arg : argv) {
            out.writeBytes(arg.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        out.writeBytes("HOME=/Users/me\0".getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    private static ProgramNames decode(byte[] b) {
        return ProcArgs.decode(b, b.length);
    }

    @Test
    void aScriptRunByItsShebangShowsItsInterpreter() {
        assertThat(decode(procArgs(2, "/bin/bash", "/bin/sh", "./hook.sh"))).isEqualTo(new ProgramNames("bash", "sh"));
    }

    @Test
    void aLoginShellLosesItsDash() {
        assertThat(decode(procArgs(1, "/bin/zsh", "-zsh"))).isEqualTo(new ProgramNames("zsh", "zsh"));
    }

    @Test
    void noArgvMeansNoArgv0() {
        assertThat(decode(procArgs(0, "/usr/bin/agent"))).isEqualTo(new ProgramNames("agent", ""));
    }

    @Test
    void whatIsCutShortIsEmptyNeverAnError() {
        byte[] whole = procArgs(2, "/opt/homebrew/bin/node", "node", "agent.js");
        assertThat(decode(whole)).isEqualTo(new ProgramNames("node", "node"));
        assertThat(ProcArgs.decode(whole, 3)).isEqualTo(ProgramNames.UNKNOWN);
        assertThat(ProcArgs.decode(whole, 10)).isEqualTo(ProgramNames.UNKNOWN); // inside the path
        assertThat(ProcArgs.decode(whole, 28)).isEqualTo(new ProgramNames("node", "")); // after the padding
        assertThat(ProcArgs.decode(Arrays.copyOf(whole, 30), 999)).isEqualTo(new ProgramNames("node", ""));
        assertThat(ProcArgs.decode(new byte[0], 0)).isEqualTo(ProgramNames.UNKNOWN);
    }
}
