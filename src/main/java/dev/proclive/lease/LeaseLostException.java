package dev.proclive.lease;

import java.util.Objects;

/** A lease is no longer this holder's, for the reason {@link #lost()} gives: stop writing to what it protected. */
public final class LeaseLostException extends LeaseException {

    private static final long serialVersionUID = 1L;

    private final transient LeaseLost lost;

    /** Lease {@code name} is no longer this grant's, for the reason {@code lost} gives. */
    public LeaseLostException(String name, LeaseLost lost) {
        super(name, "lease " + name + " is no longer held by this holder (" + Objects.requireNonNull(lost, "lost").why()
                .name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + "): " + lost.detail(), null);
        this.lost = lost;
    }

    /** Why the lease is lost. */
    public LeaseLost lost() {
        return lost;
    }
}
