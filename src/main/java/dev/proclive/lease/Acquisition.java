package dev.proclive.lease;

import dev.proclive.Verdict;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link LeaseStore#acquire}, {@link LeaseStore#reserve} or {@link LeaseStore#claim} decided:
 * {@link Granted}, {@link Held} by a live holder, {@link Undecided} because the holder's end
 * cannot be proven, {@link NotAlive} because the process it was asked for is not alive itself, or
 * (of a claim) {@link NotCarrier} because that process does not carry the reservation's token.
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
     * <p>A lease excludes other <em>holders</em>, not two processes acting for one: a grant to the
     * holder that already has it (two hooks of one agent, each asking for their owner) is granted
     * again, same fence, and {@link #again()} says so.
     *
     * @param lease    the lease, with its fence
     * @param previous the record this grant replaced (a released one, the same holder's, or one
     *                 taken over, which then also names the verdict that allowed it), or empty
     * @param again    whether the holder had it already: the same grant, renewed, not a new one
     */
    record Granted(Lease lease, Optional<LeaseRecord> previous, boolean again) implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Granted {
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(previous, "previous");
        }
    }

    /**
     * Another holder has the lease and is ALIVE.
     *
     * @param record  the record as read (or as adopted by the process carrying its reservation's token)
     * @param verdict the holder's verdict just now
     */
    record Held(LeaseRecord record, Verdict verdict) implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Held {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(verdict, "verdict");
        }
    }

    /**
     * Another holder has the lease and whether it lives cannot be proven (UNKNOWN), or a reservation
     * cannot be proven unused (a scan for its token could not read every process).
     *
     * @param record     the record as read
     * @param verdict    the holder's verdict just now
     * @param eligibleAt when the policy would take it over ({@code renewedAt + ttl} of the
     *                   record), or empty when the policy never takes it over
     * @param why        what kept the proof from completing, for a person: the holder's verdict, or
     *                   what a scan for the token could not read ("pid 4242 ended before its
     *                   environment could be read", "3 processes of other users could not be read")
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
     * The process the lease was asked for is not ALIVE (it may have died between being named and
     * asking): nothing was read or written.
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
     * A claim for a process that does not carry the reservation's token: its initial environment
     * was read and holds no {@code PROCLIVE_LEASE_TOKEN} with that token. Only the process a
     * reservation was made for (or one it started) can claim it; nothing was written.
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
