package dev.proclive.lease;

import java.util.Objects;
import java.util.Optional;

/**
 * Why a granted lease is no longer its holder's, as this JVM learned it: {@link Lease#lost()} completes with one, and
 * {@link LeaseLostException#lost()} carries one.
 *
 * @param why    what happened to the grant: {@code TAKEN_OVER}, {@code BROKEN}, {@code EXPIRED}, {@code UNCONFIRMED},
 *               {@code HOLDER_DIED} or {@code REMOVED}; {@code RELEASED} when it was released through another
 *               {@link Lease} of the same grant (the one its holder had before it asked for the lease again)
 * @param record the record that shows it, when there is one (a takeover's, a break's, an end's); empty when the record
 *               is gone or was not read (an unconfirmed keep-alive)
 * @param detail one line for a person: whose grant, what the record says now
 */
public record LeaseLost(LeaseChange why, Optional<LeaseRecord> record, String detail) {

    /**
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if {@code why} says the grant was granted, not lost
     */
    public LeaseLost {
        Objects.requireNonNull(why, "why");
        if (why == LeaseChange.GRANTED) {
            throw new IllegalArgumentException("a grant is not lost by being granted");
        }
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(detail, "detail");
    }
}
