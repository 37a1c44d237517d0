package dev.proclive.lease;

/**
 * A lease is no longer this holder's: its record was released, broken, taken over, deleted, or
 * carries another fence or holder. Stop writing to what it protected.
 */
public final class LeaseLostException extends LeaseException {

    private static final long serialVersionUID = 1L;

    /** Lease {@code name} is no longer this grant's, as {@code found} says. */
    public LeaseLostException(String name, String found) {
        super(name, "lease " + name + " is no longer held by this holder: " + found, null);
    }
}
