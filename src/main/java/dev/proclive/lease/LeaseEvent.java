package dev.proclive.lease;

import java.util.Objects;
import java.util.Optional;

/**
 * A change of one lease's record by any process, as a {@link LeaseStore#watch watch} tells it, or the death of the
 * holder a record names ({@link LeaseChange#HOLDER_DIED}), which needs no write.
 *
 * @param kind     what happened: {@code GRANTED}, {@code RELEASED}, {@code EXITED} (spawn_failed too),
 *                 {@code TAKEN_OVER}, {@code BROKEN}, {@code EXPIRED} or {@code HOLDER_DIED}
 * @param record   the record that shows it (for {@link LeaseChange#EXPIRED}, the last one seen before it went; for
 *                 {@link LeaseChange#HOLDER_DIED}, the one that names the dead holder)
 * @param previous the record the watch saw before this one; empty when there was none
 */
public record LeaseEvent(LeaseChange kind, LeaseRecord record, Optional<LeaseRecord> previous) {

    /** @throws NullPointerException if an argument is null */
    public LeaseEvent {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(record, "record");
        Objects.requireNonNull(previous, "previous");
    }
}
