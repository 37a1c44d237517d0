package dev.proclive.lease.core;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Finds a program as {@link ProcessBuilder#start()} does on Linux, for a command another program runs in its place: a
 * missing one fails here, with the JDK's message, instead of starting a process that fails.
 */
final class Executables {

    /** What the JDK searches when {@code PATH} is unset. */
    private static final String DEFAULT_PATH = "/bin:/usr/bin";

    private Executables() {
    }

    /** Absolute, unless given relative with a {@code /}: then kept as is, to run against {@code directory}. */
    static String find(String program, File directory) throws IOException {
        Path base = directory == null ? Path.of("").toAbsolutePath() : directory.toPath().toAbsolutePath();
        try {
            if (program.contains("/")) {
                Path p = base.resolve(program);
                if (!Files.exists(p)) {
                    throw failed(program, directory, 2, "No such file or directory");
                }
                if (!Files.isExecutable(p) || Files.isDirectory(p)) {
                    throw failed(program, directory, 13, "Permission denied");
                }
                return program;
            }
            String path = System.getenv("PATH");
            for (String dir : (path == null ? DEFAULT_PATH : path).split(":", -1)) {
                Path p = base.resolve(dir.isEmpty() ? "." : dir).resolve(program);
                if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                    return p.toAbsolutePath().normalize().toString();
                }
            }
        } catch (InvalidPathException e) {
            // as a program that is not there
        }
        throw failed(program, directory, 2, "No such file or directory");
    }

    private static IOException failed(String program, File directory, int errno, String error) {
        return new IOException("Cannot run program \"" + program + "\""
                + (directory == null ? "" : " (in directory \"" + directory + "\")") + ": error=" + errno + ", " + error);
    }
}
