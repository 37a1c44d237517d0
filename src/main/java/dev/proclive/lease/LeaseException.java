package dev.proclive.lease;

import java.io.IOException;

/**
 * What a lease operation found that is not an I/O failure: the lease is no longer this holder's
 * ({@link LeaseLostException}), or its files cannot be trusted ({@link LeaseCorruptException}).
 * Catch this to treat both alike; an {@link IOException} that is not one of them is the file
 * system's.
 */
public abstract sealed class LeaseException extends IOException permits LeaseLostException, LeaseCorruptException {

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
