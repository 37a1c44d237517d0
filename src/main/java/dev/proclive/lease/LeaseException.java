package dev.proclive.lease;

import java.io.IOException;

/**
 * What a lease operation found that is not an I/O failure: the lease is no longer this holder's
 * (lost), or its files cannot be trusted (corrupt) — the two kinds of it this package throws, and
 * the only ones (its constructor is the package's). Catch this to treat both alike; an
 * {@link IOException} that is not one of them is the file system's.
 */
public abstract class LeaseException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String name;

    LeaseException(String name, String message, Throwable cause) {
        super(message, cause);
        this.name = name;
    }

    /** The lease's name. */
    public String name() {
        return name;
    }
}
