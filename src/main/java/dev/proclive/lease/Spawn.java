package dev.proclive.lease;

import java.io.IOException;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link LeaseStore#spawn} did: {@link Started} the process under the lease, or started
 * nothing and says why in the {@link Acquisition} that refused it ({@link Refused}): one answer,
 * the reservation's, not a second copy of its cases.
 *
 * <pre>{@code
 * Spawn spawn = store.spawn("build", new ProcessBuilder("make"));
 * if (spawn instanceof Spawn.Started started) {
 *     started.process().waitFor();   // the lease ends as "exited" by itself when make exits
 * } else if (((Spawn.Refused) spawn).refusal() instanceof Acquisition.Held held) {
 *     System.err.println("held by pid " + held.record().holder().pid());
 * }
 * }</pre>
 */
public sealed interface Spawn {

    /**
     * The process runs. Once {@link ProcessBuilder#start()} has returned, this is what
     * {@code spawn} answers, whatever fails after: the caller always gets the {@code Process} it
     * must look after.
     *
     * <p>{@link #lease()} is the lease as it then is: normally {@linkplain LeaseRecord.State#HELD
     * held} by the process. If the hand-off failed ({@link #handOffFailure()}: an I/O error, a claim
     * that raced it) it may still be {@linkplain LeaseRecord.State#RESERVED reserved}: the process
     * carries the token and can {@linkplain LeaseStore#claim claim} it, and a newcomer's scan finds
     * it. If the process exited before the hand-off, the lease is already ended as {@code exited}.
     * While this JVM lives, the lease is ended as {@code exited}, with the status, when the process
     * exits; {@link #process()}'s {@code waitFor} and {@code onExit} return once that end is written
     * (or could not be: its holder is then gone, and the next newcomer proves it), so a record read
     * after them says how the process ended.
     *
     * @param lease          the lease
     * @param process        the process; its {@code waitFor} and {@code onExit} wait for its end to be recorded
     * @param handOffFailure why the lease could not be handed to the process, if it could not
     */
    record Started(Lease lease, Process process, Optional<IOException> handOffFailure) implements Spawn {
        /** @throws NullPointerException if an argument is null */
        public Started {
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(process, "process");
            Objects.requireNonNull(handOffFailure, "handOffFailure");
        }
    }

    /**
     * Nothing was started: the reservation was refused, as {@code refusal} says
     * ({@link Acquisition.Held}, {@link Acquisition.Undecided}, or {@link Acquisition.NotAlive} when
     * this process itself cannot be proven alive).
     *
     * @param refusal why; never {@link Acquisition.Granted}
     */
    record Refused(Acquisition refusal) implements Spawn {
        /**
         * @throws NullPointerException     if {@code refusal} is null
         * @throws IllegalArgumentException if it is a grant
         */
        public Refused {
            Objects.requireNonNull(refusal, "refusal");
            if (refusal instanceof Acquisition.Granted) {
                throw new IllegalArgumentException("a grant is no refusal");
            }
        }
    }
}
