package dev.proclive.lease.book;

import dev.proclive.lease.LeaseRecord;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Where a store's records live, one writer per lease at a time: under a lock (a directory) or by a
 * transaction comparing what was read (a key-value store). The engine decides; a book never knows liveness.
 */
public interface LeaseBook {

    /** Read without a lock. */
    Optional<LeaseRecord> read(String name) throws IOException;

    /**
     * Runs {@code work} as the one writer of {@code name}. A book that cannot lock reruns it from a fresh
     * read when another writer came first, so {@code work} decides from what it reads and nothing else.
     */
    <T> T locked(String name, Locked<T> work) throws IOException;

    /** {@link #locked(String, Locked)}, failing after {@code most} without the lock (a lockless book ignores it). */
    default <T> T locked(String name, java.time.Duration most, Locked<T> work) throws IOException {
        return locked(name, work);
    }

    /** {@code session}: the expiring one the record is on ({@link #keep}); 0 where records do not expire. */
    record Grant(LeaseRecord record, long session) {
    }

    /** Whether a record goes away by itself unless the book keeps it alive. */
    default boolean expires() {
        return false;
    }

    /** Keeps {@code grant} fresh until ended or lost, without rewriting its record; another process's too. */
    void keep(Grant grant);

    /** True where nothing expires. */
    default boolean keeping(String name, long fence) {
        return true;
    }

    /**
     * The grant is ended or its record no longer its own; if lost, nothing of it may still write. Only now
     * may what the book kept for it go: a lost grant's record is never freed before.
     */
    void ended(String name, long fence);

    /** Read at one moment; records that cannot be read are left out. */
    java.util.List<Grant> grants() throws IOException;

    Map<String, String> environment();

    /**
     * Where its records live, the same for every book of this JVM over them however they were spelled (a directory's
     * device and inode, an etcd cluster's id and the prefix): the stores of one JVM over one place write as one.
     */
    default String place() {
        return new java.util.TreeMap<>(environment()).toString();
    }

    /** Completes when the record may have changed since last read here; empty where the book cannot tell. */
    default Optional<CompletableFuture<Void>> changed(String name) {
        return Optional.empty();
    }

    /** Keeps alive the expiring session waiters' tickets live on, if any; called at least every few seconds. */
    default void stillWaiting(String name) throws IOException {
    }

    /** Changes whenever the record is replaced or removed; found without reading it (a file's identity, size, time). */
    default Optional<Object> stamp(String name) throws IOException {
        return Optional.empty();
    }

    /** The {@link #stamp} of this book's last write of {@code name}, under the lock, if it was that grant's. */
    default Optional<Object> writtenStamp(String name, long fence) {
        return Optional.empty();
    }

    /** Whether what keeps the grant alive already went unconfirmed for too long. */
    boolean lost(String name, long fence);

    /** Why a grant {@link #lost} was lost, where the book knows more than that it went unconfirmed. */
    default Optional<String> lostBecause(String name, long fence) {
        return Optional.empty();
    }

    /**
     * The highest fence granted, where kept apart from the record (a directory's guard), read without
     * the lock: a record below it was rolled back.
     * @throws LeaseCorruptException if what keeps it is no fence
     */
    default java.util.OptionalLong highestFence(String name) throws IOException {
        return java.util.OptionalLong.empty();
    }

    /** Stops keeping anything alive; the book may not be used after. Closing twice does nothing more. */
    void close();

    /**
     * A queue ticket: {@code who} wants the lease, {@code by} waits (a CLI waiting for its shell). Dropped
     * past {@code until}, or once {@code by} is DEAD, whoever it names.
     */
    record Waiter(dev.proclive.Identity who, dev.proclive.Identity by, Instant until) {
        public Waiter {
            java.util.Objects.requireNonNull(who, "who");
            java.util.Objects.requireNonNull(by, "by");
            java.util.Objects.requireNonNull(until, "until");
        }

        public Waiter(dev.proclive.Identity who, Instant until) {
            this(who, who, until);
        }
    }

    /** One lease while its writer holds it. */
    interface Guard {
        /** Read once for this writer. */
        Optional<LeaseRecord> record() throws IOException;

        /**
         * Whether the record is still {@code granted}, as a grant's write made it and nothing wrote since (a
         * grant whose answer was lost is ended only so). Under a lock nothing else writes: equal is enough.
         */
        default boolean stillAsGranted(LeaseRecord granted) throws IOException {
            return record().map(r -> LeaseJson.write(r).equals(LeaseJson.write(granted))).orElse(false);
        }

        /**
         * Where the highest fence kept apart from the record cannot be read, rewrites it from what the
         * record proves, so fences never go back below it; whether it did. For {@code break}.
         */
        default boolean repair() throws IOException {
            return false;
        }

        /** Longest-waiting first. */
        java.util.List<Waiter> waiters() throws IOException;

        void waiters(java.util.List<Waiter> queue) throws IOException;

        /** The highest fence ever granted: 0 when none was. */
        long fence() throws IOException;

        /** Over the record read, its fence as it is. */
        void replace(LeaseRecord record) throws IOException;

        /** A new grant, fenced above every earlier one, forced before return; corrupt if the last fence was granted. */
        LeaseRecord grant(LeaseRecord record) throws IOException;

        /** Before costly work (a scan): a book that started from a remembered snapshot reads again and reruns. */
        default void confirm() throws IOException {
        }

        /** Whatever is in the record's place (not JSON, a link, a directory); the fence stays: {@code break}. */
        void remove() throws IOException;

        /** An UNKNOWN holder's lease is taken no earlier; where records are not rewritten, as what keeps them says. */
        Instant freshUntil(LeaseRecord record) throws IOException;

        /** When the record goes away unless someone keeps it; empty where it never does. */
        default Optional<Instant> expiresAt() throws IOException {
            return Optional.empty();
        }
    }

    interface Locked<T> {
        T run(Guard guard) throws IOException;
    }
}
