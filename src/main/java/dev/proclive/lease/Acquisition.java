package dev.proclive.lease;

import dev.proclive.Verdict;
import java.io.IOException;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link LeaseStore#acquire}, {@link LeaseStore#reserve}, {@link LeaseStore#claim} or {@link LeaseStore#spawn}
 * decided: {@link Granted} (of a spawn: {@link Started}), {@link Held}, {@link Undecided}, {@link NotAlive} or (of a
 * claim) {@link NotCarrier}.
 *
 * <pre>{@code
 * Acquisition a = store.acquire("build", owner);
 * if (a instanceof Acquisition.Granted granted) {
 *     try (Lease lease = granted.lease()) {
 *         write(lease.fence());            // the resource refuses fences lower than the last it saw
 *     }
 * }
 * }</pre>
 */
public sealed interface Acquisition {

    /**
     * The lease is the caller's holder's now.
     *
     * @param lease    the lease, with its fence
     * @param previous the record this grant replaced (a released one, the same holder's, or one taken over, which then
     *                 also names the verdict that allowed it), or empty
     * @param again    whether the holder had it already (two hooks of one agent): the same grant and fence, renewed
     */
    record Granted(Lease lease, Optional<LeaseRecord> previous, boolean again) implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Granted {
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(previous, "previous");
        }
    }

    /**
     * Of {@link LeaseStore#spawn} only: the process runs under the lease. Once {@link ProcessBuilder#start()} returned,
     * {@code spawn} answers this whatever fails after, so the caller always gets the {@code Process} to look after.
     *
     * <p>{@link #lease()} is normally {@linkplain LeaseRecord.State#HELD held} by the process. If the hand-off failed
     * ({@link #handOffFailure()}: an I/O error, a claim that raced it) it may still be
     * {@linkplain LeaseRecord.State#RESERVED reserved}: the process carries the token and can
     * {@linkplain LeaseStore#claim claim} it, and a newcomer's scan finds it. If the process exited before the
     * hand-off, the lease is already ended as {@code exited}. While this JVM lives and the store is open, the lease
     * ends as {@code exited}, with the status, when the process exits; {@link #process()}'s {@code waitFor} and
     * {@code onExit} return only once that end is written (or could not be), so a record read after them says how it
     * ended. After a close nothing is written: the next newcomer proves the holder DEAD.
     *
     * <pre>{@code
     * Acquisition a = store.spawn("build", new ProcessBuilder("make"));
     * if (a instanceof Acquisition.Started started) {
     *     started.process().waitFor();   // the lease ends as "exited" by itself when make exits
     * } else if (a instanceof Acquisition.Held held) {
     *     System.err.println("held by pid " + held.record().holder().pid());
     * }
     * }</pre>
     *
     * @param lease          the lease
     * @param process        the process
     * @param handOffFailure why the lease could not be handed to the process, if it could not
     */
    record Started(Lease lease, Process process, Optional<IOException> handOffFailure) implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Started {
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(process, "process");
            Objects.requireNonNull(handOffFailure, "handOffFailure");
        }
    }

    /**
     * Another holder has the lease and is ALIVE; or the lease is free but a waiter that came first is served first,
     * which {@code verdict} then says (where the lease has no record, on etcd once it expired, {@code record} stands
     * for it: released at the highest fence, naming as holder the waiter whose turn it is, never written).
     *
     * @param record  the record as read (or as adopted by the process carrying its reservation's token)
     * @param verdict the holder's verdict just now, or whose turn it is
     */
    record Held(LeaseRecord record, Verdict verdict) implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Held {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(verdict, "verdict");
        }
    }

    /**
     * Another holder has the lease and whether it lives cannot be proven (UNKNOWN), or a reservation cannot be proven
     * unused (a scan for its token could not read every process).
     *
     * @param record     the record as read
     * @param verdict    the holder's verdict just now
     * @param eligibleAt when the policy would take it over (the TTL after it was last kept: the record's
     *                   {@code renewedAt}, or a keeper's later word), or empty if never
     * @param why        what kept the proof from completing, for a person: the holder's verdict, or what a scan for the
     *                   token could not read
     */
    record Undecided(LeaseRecord record, Verdict verdict, Optional<Instant> eligibleAt, String why)
            implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Undecided {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(eligibleAt, "eligibleAt");
            Objects.requireNonNull(why, "why");
        }

        /** Undecided because of the holder's verdict alone: {@code why} is its detail. */
        public Undecided(LeaseRecord record, Verdict verdict, Optional<Instant> eligibleAt) {
            this(record, verdict, eligibleAt, verdict.detail());
        }
    }

    /**
     * The process the lease was asked for is not ALIVE (it may have died since being named): nothing read or written.
     *
     * @param verdict its verdict
     */
    record NotAlive(Verdict verdict) implements Acquisition {
        /** @throws NullPointerException if {@code verdict} is null */
        public NotAlive {
            Objects.requireNonNull(verdict, "verdict");
        }
    }

    /**
     * The claimer's initial environment was read and does not carry the reservation's token; nothing was written.
     *
     * @param verdict the claimer's verdict (it is ALIVE)
     */
    record NotCarrier(Verdict verdict) implements Acquisition {
        /** @throws NullPointerException if {@code verdict} is null */
        public NotCarrier {
            Objects.requireNonNull(verdict, "verdict");
        }
    }
}
