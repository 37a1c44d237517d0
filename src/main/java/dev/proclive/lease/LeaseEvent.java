package dev.proclive.lease;

import java.util.Objects;
import java.util.Optional;

/**
 * A change of one lease's record, as a {@link LeaseStore#watch watch} sees it, written by any
 * process: said after the write is durable, in the order the record went through them; and the
 * death of the holder a record names ({@link Kind#HOLDER_DIED}), which nobody needs to write.
 *
 * @param kind     what happened
 * @param record   the record that shows it (for {@link Kind#EXPIRED}, the last one seen before it went;
 *                 for {@link Kind#HOLDER_DIED}, the one that names the dead holder)
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
        EXPIRED,
        /**
         * Its holder ended, as this machine's exit watch saw it (within milliseconds, whoever's child
         * it was), while the record still named it: nobody had written its end yet. The record is
         * the one that names the dead holder; it may still say granted until someone writes the end
         * or a newcomer takes it over (told then as {@code EXITED} or {@code TAKEN_OVER}). Told once
         * per grant and holder, and only for a holder this machine can judge; on etcd a holder
         * elsewhere is heard of when its record expires ({@code EXPIRED}).
         */
        HOLDER_DIED
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
