package dev.proclive.lease;

import java.util.Objects;
import java.util.Optional;

/**
 * A change of one lease's record, as a {@link LeaseStore#watch watch} sees it, written by any
 * process: said after the write is durable, in the order the record went through them.
 *
 * @param kind     what happened
 * @param record   the record that shows it (for {@link Kind#EXPIRED}, the last one seen before it went)
 * @param previous the record the watch saw before this one; empty when there was none
 */
public record LeaseEvent(Kind kind, LeaseRecord record, Optional<LeaseRecord> previous) {

    /** What happened to the lease. */
    public enum Kind {
        /** Granted (held or reserved) to a holder: a new grant, or one handed to a new holder at its fence. */
        GRANTED,
        /** Its holder released it. */
        RELEASED,
        /** Its holder ended, or the command it was reserved for could not start: the record says {@code exited}. */
        EXITED,
        /** Granted to a newcomer over a holder proven gone: the record's {@code previous} says whose and why. */
        TAKEN_OVER,
        /** An operator broke it. */
        BROKEN,
        /** Its record went away by itself (etcd: nobody kept it alive) or was removed while granted. */
        EXPIRED
    }

    /** @throws NullPointerException if an argument is null */
    public LeaseEvent {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(previous, "previous");
    }

    /** What happened to the lease. */
    @Override
    public Kind kind() {
        return kind;
    }

    /**
     * The record that shows it, as it was written; for {@link Kind#EXPIRED}, the last one the watch
     * saw before it went.
     */
    @Override
    public LeaseRecord record() {
        return record;
    }

    /** The record the watch saw before this one; empty when this is the first it saw. */
    @Override
    public Optional<LeaseRecord> previous() {
        return previous;
    }
}
