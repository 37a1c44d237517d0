package dev.proclive.macos;

import dev.proclive.spi.internal.ProgramNames;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Decodes what {@code sysctl(CTL_KERN, KERN_PROCARGS2, pid)} answers (xnu {@code sysctl_procargsx}):
 * a native {@code int argc}; the executable's path, NUL-terminated and NUL-padded to an 8-byte
 * boundary <em>of the path</em>, so that {@code argv[0]} starts at {@code 4 + roundUp(pathLen + 1, 8)}
 * (an empty {@code argv[0]} is a value, never a reason to take the next string); {@code argc}
 * arguments; then the environment, each NUL-terminated, ended by an empty string. When the strings
 * exceed the buffer the kernel copies their <em>tail</em> and the answer fills the buffer exactly:
 * a full buffer is never decoded. Pure over bytes, so it is tested on every OS.
 */
final class ProcArgs {

    private ProcArgs() {
    }

    /** The parts of an answer: argv and the environment, or empty when it cannot be trusted. */
    record Parts(String executable, List<String> argv, List<String> environment) {
    }

    /**
     * The executable's and {@code argv[0]}'s file names in {@code b[0, len)}: unknown when the
     * answer filled the buffer (then it holds the strings' tail) or is cut short. Never throws.
     */
    static ProgramNames decode(byte[] b, int len) {
        Optional<Parts> parts = parts(b, len);
        if (parts.isEmpty()) {
            return ProgramNames.UNKNOWN;
        }
        String executable = ProgramNames.fileName(parts.get().executable());
        if (parts.get().argv().isEmpty()) {
            return new ProgramNames(executable, "");
        }
        String word = parts.get().argv().get(0);
        return new ProgramNames(executable, ProgramNames.fileName(word.startsWith("-") ? word.substring(1) : word));
    }

    /**
     * Whether the environment in the answer holds {@code variable} with a value {@code value}
     * accepts; empty when that cannot be told.
     */
    static Optional<Boolean> environmentHolds(byte[] b, int len, String variable,
                                              java.util.function.Predicate<String> value) {
        String prefix = variable + "=";
        return parts(b, len).map(p -> p.environment().stream()
                .anyMatch(e -> e.startsWith(prefix) && value.test(e.substring(prefix.length()))));
    }

    /** The answer's parts, or empty when it filled the buffer, is cut short, or does not parse. */
    static Optional<Parts> parts(byte[] b, int len) {
        if (len < Integer.BYTES || len >= b.length) {
            return Optional.empty(); // nothing, or a full buffer: the kernel copied the strings' tail
        }
        int argc = ByteBuffer.wrap(b, 0, Integer.BYTES).order(ByteOrder.nativeOrder()).getInt();
        int pathEnd = indexOfNul(b, Integer.BYTES, len);
        if (pathEnd < 0 || argc < 0) {
            return Optional.empty();
        }
        int pathLength = pathEnd - Integer.BYTES;
        int at = Integer.BYTES + roundUp(pathLength + 1, 8);
        List<String> argv = new ArrayList<>();
        for (int i = 0; i < argc; i++) {
            int end = at < len ? indexOfNul(b, at, len) : -1;
            if (end < 0) {
                return Optional.empty();
            }
            argv.add(text(b, at, end));
            at = end + 1;
        }
        List<String> environment = new ArrayList<>();
        while (at < len) {
            int end = indexOfNul(b, at, len);
            if (end < 0 || end == at) {
                break; // cut short, or the empty string that ends it
            }
            environment.add(text(b, at, end));
            at = end + 1;
        }
        return Optional.of(new Parts(text(b, Integer.BYTES, pathEnd), argv, environment));
    }

    private static int roundUp(int n, int to) {
        return (n + to - 1) / to * to;
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
