package dev.proclive.lease;

/**
 * A lease's record or guard file cannot be trusted: it does not parse, something other than a regular file (a symbolic
 * link, a directory) stands where it should be, it was rolled back below the guard's fence, or the lease granted its
 * last fence. Nothing was changed: a person has to look.
 */
public final class LeaseCorruptException extends LeaseException {

    private static final long serialVersionUID = 1L;

    /** Lease {@code name}'s record or guard holds what {@code found} says. */
    public LeaseCorruptException(String name, String found) {
        super(name, "lease " + name + ": " + found, null);
    }

    /** As {@link #LeaseCorruptException(String, String)}, with what failed to read it. */
    public LeaseCorruptException(String name, String found, Throwable cause) {
        super(name, "lease " + name + ": " + found, cause);
    }
}
