package dev.proclive.lease;

import java.io.IOException;

/**
 * A lease's record or guard file cannot be trusted: it does not parse, or something other than a
 * regular file (a symbolic link, a directory) stands where it should be. Nothing was changed: a
 * person has to look.
 */
public final class LeaseCorruptException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String name;

    LeaseCorruptException(String name, String found) {
        super("lease " + name + ": " + found);
        this.name = name;
    }

    LeaseCorruptException(String name, String found, Throwable cause) {
        super("lease " + name + ": " + found, cause);
        this.name = name;
    }

    /** The lease's name. */
    public String name() {
        return name;
    }
}
