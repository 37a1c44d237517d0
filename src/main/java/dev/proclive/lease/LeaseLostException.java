package dev.proclive.lease;

import java.io.IOException;

/**
 * A lease is no longer this holder's: its record was released, broken, taken over, deleted, or
 * carries another fence or holder. Stop writing to what it protected.
 */
public final class LeaseLostException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String name;

    LeaseLostException(String name, String found) {
        super("lease " + name + " is no longer held by this holder: " + found);
        this.name = name;
    }

    /** The lease's name. */
    public String name() {
        return name;
    }
}
