package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.spi.internal.ProgramNames;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code KERN_PROCARGS2} answers built byte by byte in the kernel's layout, decoded on every OS. */
class ProcArgsTest {

    /**
     * As xnu lays it out: argc; the executable path, its NUL, NULs up to an 8-byte boundary of the
     * path (argv[0] at 4 + roundUp(pathLen + 1, 8)); argv; the environment; an empty string.
     */
    static byte[] procArgs(int argc, String executable, List<String> argv, List<String> env) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(argc).array());
        byte[] path = executable.getBytes(StandardCharsets.UTF_8);
        out.writeBytes(path);
        int padded = (path.length + 1 + 7) / 8 * 8;
        out.writeBytes(new byte[padded - path.length]);
        for (String s : argv) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        for (String s : env) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        out.write(0);
        out.writeBytes("executable_path=/x\0".getBytes(StandardCharsets.UTF_8)); // the apple strings after it
        return out.toByteArray();
    }

    static byte[] procArgs(int argc, String executable, String... argv) {
        return procArgs(argc, executable, List.of(argv), List.of("HOME=/Users/me"));
    }

    /** Decodes an answer that fits a buffer one byte larger, as a real call would leave it. */
    private static ProgramNames decode(byte[] b) {
        return ProcArgs.decode(Arrays.copyOf(b, b.length + 1), b.length);
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
    void theArgumentsStartAfterThePathsOwnPaddingWhateverItsLength() {
        for (String path : List.of("/a", "/bin/sh", "/bin/zsh", "/usr/bin/agent", "/opt/homebrew/bin/node12")) {
            byte[] b = procArgs(1, path, List.of("x"), List.of());
            assertThat(ProcArgs.parts(Arrays.copyOf(b, b.length + 1), b.length).orElseThrow().argv()).as(path)
                    .containsExactly("x");
        }
    }

    @Test
    void anEmptyArgv0IsAValueNotTheNextString() {
        byte[] b = procArgs(1, "/usr/bin/agent", List.of(""), List.of("SHELL=/bin/zsh"));
        assertThat(decode(b)).isEqualTo(new ProgramNames("agent", ""));
        assertThat(ProcArgs.parts(Arrays.copyOf(b, b.length + 1), b.length).orElseThrow().environment())
                .containsExactly("SHELL=/bin/zsh");
    }

    @Test
    void aFullBufferHoldsTheTailAndIsNeverDecoded() {
        byte[] whole = procArgs(2, "/bin/bash", List.of("/bin/sh", "./hook.sh"), List.of("A=" + "x".repeat(100)));
        // What the kernel answers when the strings exceed a buffer: their tail, the buffer filled exactly.
        byte[] tail = Arrays.copyOfRange(whole, whole.length - 64, whole.length);
        assertThat(ProcArgs.decode(tail, tail.length)).isEqualTo(ProgramNames.UNKNOWN);
        assertThat(ProcArgs.decode(whole, whole.length)).as("full, even if it happened to fit").isEqualTo(ProgramNames.UNKNOWN);
        assertThat(ProcArgs.environmentHolds(tail, tail.length, "A", "x"::equals)).isEmpty();
    }

    @Test
    void whatIsCutShortIsUnknownNeverAnError() {
        byte[] whole = procArgs(2, "/opt/homebrew/bin/node", "node", "agent.js");
        byte[] buffer = Arrays.copyOf(whole, whole.length + 100);
        assertThat(ProcArgs.decode(buffer, whole.length)).isEqualTo(new ProgramNames("node", "node"));
        assertThat(ProcArgs.decode(buffer, 3)).isEqualTo(ProgramNames.UNKNOWN);
        assertThat(ProcArgs.decode(buffer, 10)).isEqualTo(ProgramNames.UNKNOWN); // inside the path
        assertThat(ProcArgs.decode(buffer, 30)).as("argv cut short").isEqualTo(ProgramNames.UNKNOWN);
        assertThat(ProcArgs.decode(new byte[0], 0)).isEqualTo(ProgramNames.UNKNOWN);
        byte[] negative = procArgs(-1, "/bin/sh");
        assertThat(decode(negative)).isEqualTo(ProgramNames.UNKNOWN);
    }

    @Test
    void theEnvironmentIsReadUpToItsEmptyString() {
        String token = "PROCLIVE_LEASE_TOKEN=0123456789abcdef0123456789abcdef";
        byte[] b = procArgs(2, "/usr/bin/agent", List.of("agent", "--x"), List.of("HOME=/Users/me", token, "LANG=C"));
        byte[] buffer = Arrays.copyOf(b, b.length + 10);
        assertThat(ProcArgs.parts(buffer, b.length).orElseThrow().environment())
                .containsExactly("HOME=/Users/me", token, "LANG=C");
        String value = token.substring(token.indexOf('=') + 1);
        assertThat(ProcArgs.environmentHolds(buffer, b.length, "PROCLIVE_LEASE_TOKEN", value::equals)).contains(true);
        assertThat(ProcArgs.environmentHolds(buffer, b.length, "PROCLIVE_LEASE_TOKEN",
                value.substring(0, value.length() - 1)::equals)).contains(false);
        assertThat(ProcArgs.environmentHolds(buffer, b.length, "PROCLIVE_LEASE", v -> true))
                .as("a name is matched whole, up to its =").contains(false);
        assertThat(ProcArgs.environmentHolds(buffer, b.length, "executable_path", v -> true))
                .as("the apple strings are not environment").contains(false);
        byte[] argOnly = procArgs(2, "/usr/bin/agent", List.of("agent", token), List.of());
        assertThat(ProcArgs.environmentHolds(Arrays.copyOf(argOnly, argOnly.length + 1), argOnly.length,
                "PROCLIVE_LEASE_TOKEN", v -> true)).as("an argument is not the environment").contains(false);
    }
}
