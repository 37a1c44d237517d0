package dev.proclive.lease.book;

import dev.proclive.lease.LeaseRecord;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Where a store's records live, and how one lease is changed by one writer at a time: under a
 * lock (a directory's book), or by a transaction that compares what was read (a key-value store's).
 * The engine ({@code lease.core}) decides; the book holds. A book knows records, fences and guards,
 * never a process's liveness, and nothing here names the backend behind it.
 */
public interface LeaseBook {

    /** The record of lease {@code name}, or empty when there is none, read without a lock. */
    Optional<LeaseRecord> read(String name) throws IOException;

    /**
     * Runs {@code work} as the one writer of lease {@code name}: what it reads through the guard
     * is what it replaces. A book that cannot lock runs it again from a fresh read when
     * another writer came first, so {@code work} decides from what it reads and nothing else.
     */
    <T> T locked(String name, Locked<T> work) throws IOException;

    /**
     * {@link #locked(String, Locked)}, waiting for another writer's lock at most {@code most}, then
     * failing with an {@code IOException}; a book that cannot lock ignores the bound.
     */
    default <T> T locked(String name, java.time.Duration most, Locked<T> work) throws IOException {
        return locked(name, work);
    }

    /** A granted record, and the expiring session it is attached to ({@link #keep}); 0 where records do not expire. */
    record Grant(LeaseRecord record, long session) {
    }

    /** Whether a record goes away by itself unless the book keeps it alive; false where records stay until removed. */
    default boolean expires() {
        return false;
    }

    /**
     * Keeps {@code grant} fresh from now on, until it is ended or lost, without rewriting its
     * record: another process's found in this book (by the expiring {@code grant.session()} it is
     * attached to), or this store's own (named by the book's session, or attached when written).
     */
    void keep(Grant grant);

    /** Whether the grant at {@code fence} of {@code name} is kept alive by the book now; true where nothing expires. */
    default boolean keeping(String name, long fence) {
        return true;
    }

    /**
     * The grant at {@code fence} of {@code name} is ended, or its record is no longer that grant's:
     * if it was lost, nothing of it may still write. What the book kept for it may go (the expiring
     * session a lost grant still holds); a lost grant's record is never freed by this book before.
     */
    void ended(String name, long fence);

    /** Every granted record in the book, read at one moment; records that cannot be read are left out. */
    java.util.List<Grant> grants() throws IOException;

    /** The variables a spawned child finds this book in, besides its reservation. */
    Map<String, String> environment();

    /**
     * A future that completes when lease {@code name}'s record may have changed since it was last
     * read here, for a waiter to look again at once; empty where the book cannot tell (a directory).
     */
    default Optional<CompletableFuture<Void>> changed(String name) {
        return Optional.empty();
    }

    /**
     * This JVM still waits for lease {@code name}: where waiters' tickets live on an expiring
     * session, keeps it alive, so that a ticket goes away by itself once its waiter is gone. Called by
     * each waiter at least every few seconds.
     */
    default void stillWaiting(String name) throws IOException {
    }

    /**
     * What changes whenever lease {@code name}'s record is replaced or removed, found without
     * reading it (a directory: the file's identity, size and time): two equal stamps say the record
     * was not replaced between them. Empty where the book cannot tell so cheaply: then read it.
     */
    default Optional<Object> stamp(String name) throws IOException {
        return Optional.empty();
    }

    /**
     * The {@link #stamp} of lease {@code name}'s record as this book last wrote it granted at
     * {@code fence}, under the lock: a reader that finds it still there need not read the record.
     * Empty where the book does not stamp, or its last write of the lease was not that grant's.
     */
    default Optional<Object> writtenStamp(String name, long fence) {
        return Optional.empty();
    }

    /** Whether this book already knows the grant at {@code fence} lost (what keeps it alive went unconfirmed for too long). */
    boolean lost(String name, long fence);

    /**
     * The highest fence granted for lease {@code name} as the book keeps it apart from the record
     * (a directory's guard), read without the lock: a record below it was rolled back. Empty where
     * one transaction writes both.
     *
     * @throws LeaseCorruptException if what keeps it is no fence
     */
    default java.util.OptionalLong highestFence(String name) throws IOException {
        return java.util.OptionalLong.empty();
    }

    /**
     * Stops keeping anything alive and lets go of what the book holds open: the book may not be
     * used after. Closing twice does nothing more.
     */
    void close();

    /**
     * A process waiting for a lease, in a book's queue: {@code who} the lease is wanted for, {@code by}
     * the process that waits (often not {@code who}: a CLI waiting for its shell), {@code until} when
     * it stops. A ticket past {@code until}, or whose {@code by} is DEAD, is dropped, whoever it names.
     */
    record Waiter(dev.proclive.Identity who, dev.proclive.Identity by, Instant until) {
        public Waiter {
            java.util.Objects.requireNonNull(who, "who");
            java.util.Objects.requireNonNull(by, "by");
            java.util.Objects.requireNonNull(until, "until");
        }

        /** A ticket of {@code who} waiting for itself. */
        public Waiter(dev.proclive.Identity who, Instant until) {
            this(who, who, until);
        }
    }

    /** One lease while its writer holds it. */
    interface Guard {
        /** The record, read once for this writer. */
        Optional<LeaseRecord> record() throws IOException;

        /**
         * Where the highest fence is kept apart from the record and cannot be read (a guard damaged
         * or written by hand), rewrites it with the highest fence the record proves (its own, its
         * previous one's), so that fences never go back below what a record shows; whether it did.
         * The operator's way out ({@code break}).
         */
        default boolean repair() throws IOException {
            return false;
        }

        /** The processes waiting for this lease, longest-waiting first; empty where the book keeps no queue. */
        default java.util.List<Waiter> waiters() throws IOException {
            return java.util.List.of();
        }

        /** Writes the queue of waiters; ignored where the book keeps none. */
        default void waiters(java.util.List<Waiter> queue) throws IOException {
        }

        /** The highest fence ever granted for this lease: 0 when none was. */
        long fence() throws IOException;

        /** Writes {@code record} over the record read, its fence as it is. */
        void replace(LeaseRecord record) throws IOException;

        /**
         * Writes {@code record} as a new grant, with a fence above every fence this lease ever had,
         * forced before this returns; the record as written. Corrupt if the last fence was granted.
         */
        LeaseRecord grant(LeaseRecord record) throws IOException;

        /**
         * Makes sure the record is the one stored now, before costly work over it (a scan): a book
         * that started from a remembered snapshot reads it again, and the work starts over.
         */
        default void confirm() throws IOException {
        }

        /**
         * Removes the record, whatever is in its place (not JSON, contradictory, a link or a
         * directory), leaving the fence where it is: what {@code break} does to a corrupt lease.
         */
        void remove() throws IOException;

        /**
         * Until when {@code record}, the record read, is fresh: a newcomer takes an UNKNOWN holder's
         * lease no earlier. Its {@code renewedAt} plus its TTL, or, where records are not rewritten
         * to stay fresh, as long as what keeps them alive says.
         */
        default Instant freshUntil(LeaseRecord record) throws IOException {
            return record.freshUntil();
        }

        /** When the record read goes away by itself unless someone keeps it; empty where it never does. */
        default Optional<Instant> expiresAt() throws IOException {
            return Optional.empty();
        }
    }

    /** What runs as a lease's one writer. */
    interface Locked<T> {
        T run(Guard guard) throws IOException;
    }
}
