package dev.proclive.lease;

import dev.proclive.Verdict;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link LeaseStore#spawn} did: {@link Started} the process under the lease, or started
 * nothing because the lease is {@link Held} or {@link Undecided}.
 */
public sealed interface Spawn {

    /**
     * The process runs and holds the lease. If it exited before the lease could be handed to it,
     * the lease is already ended as {@code exited} ({@link Lease#isValid()} is false).
     *
     * @param lease   the lease, held by the process
     * @param process the process
     */
    record Started(Lease lease, Process process) implements Spawn {
        /** @throws NullPointerException if an argument is null */
        public Started {
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(process, "process");
        }
    }

    /**
     * Another holder has the lease and is ALIVE: nothing was started.
     *
     * @param record  the record as read
     * @param verdict the holder's verdict
     */
    record Held(LeaseRecord record, Verdict verdict) implements Spawn {
        /** @throws NullPointerException if an argument is null */
        public Held {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(verdict, "verdict");
        }
    }

    /**
     * Whether the holder lives cannot be proven: nothing was started.
     *
     * @param record     the record as read
     * @param verdict    the holder's verdict
     * @param eligibleAt when the policy would take it over, if ever
     */
    record Undecided(LeaseRecord record, Verdict verdict, Optional<Instant> eligibleAt) implements Spawn {
        /** @throws NullPointerException if an argument is null */
        public Undecided {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(eligibleAt, "eligibleAt");
        }
    }
}
