package dev.proclive.macos;

import dev.proclive.spi.ProgramNames;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Decodes what {@code sysctl(CTL_KERN, KERN_PROCARGS2, pid)} answers: a native {@code int argc},
 * the executable's path NUL-terminated, NUL padding, then {@code argv[0]}, {@code argv[1]}, … and
 * the environment, each NUL-terminated (xnu {@code sysctl_procargsx}; {@code ps}'s
 * {@code getproclline} reads it the same way). Pure over bytes, so it is tested on every OS.
 */
final class ProcArgs {

    private ProcArgs() {
    }

    /**
     * The executable's and {@code argv[0]}'s file names in {@code b[0, len)}; a part that is
     * missing or cut short is empty. Never throws.
     */
    static ProgramNames decode(byte[] b, int len) {
        int length = Math.min(len, b.length);
        if (length < Integer.BYTES) {
            return ProgramNames.UNKNOWN;
        }
        int argc = ByteBuffer.wrap(b, 0, Integer.BYTES).order(ByteOrder.nativeOrder()).getInt();
        int pathEnd = indexOfNul(b, Integer.BYTES, length);
        if (pathEnd < 0) {
            return ProgramNames.UNKNOWN; // the path itself was cut short
        }
        String executable = ProgramNames.fileName(text(b, Integer.BYTES, pathEnd));
        int argv = pathEnd;
        while (argv < length && b[argv] == 0) {
            argv++;
        }
        int argv0End = indexOfNul(b, argv, length);
        if (argc < 1 || argv >= length || argv0End < 0) {
            return new ProgramNames(executable, "");
        }
        String word = text(b, argv, argv0End);
        return new ProgramNames(executable, ProgramNames.fileName(word.startsWith("-") ? word.substring(1) : word));
    }

    private static int indexOfNul(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] == 0) {
                return i;
            }
        }
        return -1;
    }

    private static String text(byte[] b, int from, int to) {
        return new String(b, from, to - from, StandardCharsets.UTF_8);
    }
}
