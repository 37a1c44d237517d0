package dev.proclive.lease;

import java.io.IOException;

/**
 * What a lease operation found that is not an I/O failure: the lease was lost, or its files cannot be trusted
 * (corrupt); no other kinds. Catch this to treat both alike; another {@link IOException} is the file system's.
 */
public abstract class LeaseException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String name;

    LeaseException(String name, String message, Throwable cause) {
        super(message, cause);
        this.name = name;
    }

    public String name() {
        return name;
    }
}
