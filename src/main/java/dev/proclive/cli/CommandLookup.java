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
                return runnable(file) ? null : ExitCode.CANNOT_RUN;
            }
            boolean seen = false;
            for (String dir : (path == null ? "/usr/bin:/bin" : path).split(":", -1)) {
                Path file = Path.of(dir.isEmpty() ? "." : dir, command);
                if (runnable(file)) {
                    return null;
                }
                seen |= Files.exists(file);
            }
            return seen ? ExitCode.CANNOT_RUN : ExitCode.NOT_FOUND;
        } catch (InvalidPathException e) {
            return ExitCode.NOT_FOUND;
        }
    }

    private static boolean runnable(Path file) {
        return Files.isRegularFile(file) && Files.isExecutable(file);
    }
}
