package dev.proclive.cli;

import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Whether a command can be run, decided as {@code sh} decides it (POSIX "Command Search and
 * Execution"): a name with a slash is that file; any other is looked for in each {@code PATH}
 * directory in turn (an empty entry is the current directory). Not found: 127; found but not an
 * executable regular file: 126. Never from an exception's text, which the JDK words per locale.
 */
final class CommandLookup {

    private CommandLookup() {
    }

    /** Null when {@code command} can be run; else {@link ExitCode#NOT_FOUND} or {@link ExitCode#CANNOT_RUN}. */
    static ExitCode check(String command, String path) {
        if (command.isEmpty()) {
            return ExitCode.NOT_FOUND;
        }
        try {
            if (command.contains("/")) {
                Path file = Path.of(command);
                if (!Files.exists(file)) {
                    return ExitCode.NOT_FOUND;
                }
                return runnable(file) ? interpreter(file) : ExitCode.CANNOT_RUN;
            }
            boolean seen = false;
            for (String dir : (path == null ? "/usr/bin:/bin" : path).split(":", -1)) {
                Path file = Path.of(dir.isEmpty() ? "." : dir, command);
                if (runnable(file)) {
                    return interpreter(file);
                }
                seen |= Files.exists(file);
            }
            return seen ? ExitCode.CANNOT_RUN : ExitCode.NOT_FOUND;
        } catch (InvalidPathException e) {
            return ExitCode.NOT_FOUND;
        }
    }

    /**
     * For a script run through its {@code #!} line, whether its interpreter can run, as the kernel
     * decides it: a missing one is 127 (sh: "not found"), one that is not executable 126. Null for
     * anything else, a script whose interpreter runs included.
     */
    private static ExitCode interpreter(Path file) {
        byte[] head = new byte[256];
        int n;
        try (java.io.InputStream in = Files.newInputStream(file)) {
            n = in.readNBytes(head, 0, head.length);
        } catch (java.io.IOException e) {
            return null; // not readable to this process: the start says what it says
        }
        if (n < 3 || head[0] != '#' || head[1] != '!') {
            return null;
        }
        String line = new String(head, 2, n - 2, java.nio.charset.StandardCharsets.ISO_8859_1);
        int end = line.indexOf('\n');
        String[] words = (end < 0 ? line : line.substring(0, end)).trim().split("[ \t]+", 2);
        if (words[0].isEmpty() || !words[0].startsWith("/")) {
            return null;
        }
        Path interpreter = Path.of(words[0]);
        if (!Files.exists(interpreter)) {
            return ExitCode.NOT_FOUND;
        }
        return runnable(interpreter) ? null : ExitCode.CANNOT_RUN;
    }

    private static boolean runnable(Path file) {
        return Files.isRegularFile(file) && Files.isExecutable(file);
    }
}
