package dev.proclive.spi.internal;

import dev.proclive.spi.ProcessInfo;

import java.util.Objects;

/**
 * The other names a process goes by, beside the short name in {@link ProcessInfo#name()}: what an
 * owner walk needs to recognise a shell that runs a script. A script run through its {@code #!}
 * line has the <em>script's</em> file name as its short name, while its executable is the
 * interpreter and its {@code argv[0]} is usually the interpreter's path.
 *
 * @param executable the file name of the program the process runs ({@code /proc/PID/exe} on
 *                   Linux, without a {@code " (deleted)"} suffix), or empty when it cannot be read
 *                   (another user's process)
 * @param argv0      the file name of its {@code argv[0]}, without a login shell's leading
 *                   {@code -}, or empty when it cannot be read
 */
public record ProgramNames(String executable, String argv0) {

    /** Nothing known beyond the short name. */
    public static final ProgramNames UNKNOWN = new ProgramNames("", "");

    /** @throws NullPointerException if a name is null */
    public ProgramNames {
        Objects.requireNonNull(executable, "executable");
        Objects.requireNonNull(argv0, "argv0");
    }

    /** The last component of a path ({@code /usr/bin/bash} → {@code bash}). */
    public static String fileName(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
