package dev.proclive.lease;

import dev.proclive.Verdict;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link LeaseStore#acquire} decided: {@link Granted}, {@link Held} by a live holder, or
 * {@link Undecided} because the holder's liveness cannot be proven.
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
     * @param previous the record this grant replaced (a released one, the same holder's, or one
     *                 taken over, which then also names the verdict that allowed it), or empty
     */
    record Granted(Lease lease, Optional<LeaseRecord> previous) implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Granted {
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(previous, "previous");
        }
    }

    /**
     * Another holder has the lease and is ALIVE.
     *
     * @param record  the record as read
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
     * Another holder has the lease and whether it lives cannot be proven (UNKNOWN).
     *
     * @param record     the record as read
     * @param verdict    the holder's verdict just now
     * @param eligibleAt when the policy would take it over ({@code renewedAt + ttl} of the
     *                   record), or empty when the policy never takes UNKNOWN over
     */
    record Undecided(LeaseRecord record, Verdict verdict, Optional<Instant> eligibleAt) implements Acquisition {
        /** @throws NullPointerException if an argument is null */
        public Undecided {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(eligibleAt, "eligibleAt");
        }
    }
}
