package dev.proclive.lease;

import java.util.Objects;
import java.util.Optional;

/**
 * Why a granted lease is no longer its holder's, as this JVM learned it: {@link Lease#lost()}
 * completes with one, and {@link LeaseLostException#lost()} carries one.
 *
 * @param why    what happened to the grant
 * @param record the record that shows it, when there is one (a takeover's, a break's, an end's);
 *               empty when the record is gone or was not read (an unconfirmed keep-alive)
 * @param detail one line for a person: whose grant, what the record says now
 */
public record LeaseLost(Why why, Optional<LeaseRecord> record, String detail) {

    /** What happened to a grant that is lost. */
    public enum Why {
        /** Another holder was granted it: its holder was judged DEAD (or UNKNOWN past its TTL), or it was claimed. */
        TAKEN_OVER,
        /** An operator broke it ({@code proclive lease break}, {@link LeaseStore#breakLease}). */
        BROKEN,
        /** Its record went away by itself: an etcd lease that nobody kept alive. */
        EXPIRED,
        /** Its keep-alive or its renewal was not confirmed for three quarters of its TTL: anyone may be granted it soon. */
        UNCONFIRMED,
        /** Its holder ended, and the record says so ({@code exited}). */
        HOLDER_DIED,
        /** Its record was removed, or released by another process. */
        REMOVED
    }

    /** @throws NullPointerException if an argument is null */
    public LeaseLost {
        Objects.requireNonNull(why, "why");
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(detail, "detail");
    }
}
