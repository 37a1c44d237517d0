package dev.proclive.etcd;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The etcd v3 calls a lease store makes: reads and compare-and-write transactions on keys, etcd
 * leases (a TTL that keys are attached to), and a watch on a prefix. Small enough to fake in a test
 * and to put another client behind. Every read is linearizable: a member that cannot reach a
 * majority answers nothing, and that is an {@link IOException}, never an old value.
 */
public interface Etcd extends AutoCloseable {

    /** A key as etcd holds it; {@code lease} 0 when it is attached to none. */
    record KeyValue(String key, byte[] value, long createRevision, long modRevision, long lease) {
    }

    /** A compare of a transaction: {@code key}'s mod revision is {@code modRevision} (0: the key is absent). */
    record Compare(String key, long modRevision) {
    }

    sealed interface Op {
    }

    /** Writes {@code value} at {@code key}, attached to etcd lease {@code lease} (0: none). */
    record Put(String key, byte[] value, long lease) implements Op {
    }

    /** Deletes {@code key}, if it is there. */
    record Delete(String key) implements Op {
    }

    /** Reads {@code key} (in a transaction: after the operations before it). */
    record Get(String key) implements Op {
    }

    /**
     * What a transaction did: whether its compares held (and so its operations ran, else the
     * others), the revision after it, what each {@link Get} of the branch that ran read, in order
     * (empty: the key is absent).
     */
    record Outcome(boolean succeeded, long revision, List<Optional<KeyValue>> reads) {
    }

    /** A write named an etcd lease that etcd does not have (it expired, or was revoked). */
    final class LeaseNotFound extends IOException {
        private static final long serialVersionUID = 1L;
        private final long lease;

        public LeaseNotFound(String message, long lease) {
            super(message);
            this.lease = lease;
        }

        /** The etcd lease the write named, or 0 when it cannot be told. */
        public long lease() {
            return lease;
        }
    }

    /** etcd's revision went below one this user's clients saw: the cluster was restored or wiped; no fence is safe. */
    final class WentBack extends IOException {
        private static final long serialVersionUID = 1L;

        public WentBack(String message) {
            super(message);
        }
    }

    /** {@link #txn(List, List, List)} with nothing to run when a compare fails. */
    default Outcome txn(List<Compare> compares, List<Op> ops) throws IOException {
        return txn(compares, ops, List.of());
    }

    /**
     * Runs {@code ops} if every compare holds, else {@code otherwise}, atomically: a write that
     * finds its compare broken reads what broke it in the same call.
     *
     * @throws LeaseNotFound if a put names an etcd lease that is gone
     */
    Outcome txn(List<Compare> compares, List<Op> ops, List<Op> otherwise) throws IOException;

    /** Every key that starts with {@code prefix}, at one revision. */
    List<KeyValue> list(String prefix) throws IOException;

    /** A new etcd lease of {@code ttl} (whole seconds, at least one); its ID, positive. */
    long grant(Duration ttl) throws IOException;

    /**
     * {@code id} as {@link #grant} answered it, refused where it names no lease ({@code forWhat} says
     * what it was for): a key written on none never expires, whatever client answered.
     */
    static long granted(long id, String forWhat) throws IOException {
        if (id <= 0) {
            throw new IOException("etcd granted no lease for " + forWhat + " (ID " + id + ")");
        }
        return id;
    }

    /** Refreshes etcd lease {@code id}: its TTL in seconds from now, or 0 when it is gone (expired or revoked). */
    long keepAlive(long id) throws IOException;

    /**
     * {@link #keepAlive(long)}, asking another member too once the first has not answered within
     * {@code hedge}: the first answer counts, so a member that hangs costs {@code hedge}, not a call's
     * whole timeout, and a cluster slow everywhere still answers as {@link #keepAlive(long)} does.
     */
    default long keepAlive(long id, Duration hedge) throws IOException {
        return keepAlive(id);
    }

    /** Seconds etcd lease {@code id} has left, or -1 when it is gone. */
    long timeToLive(long id) throws IOException;

    /** The keys attached to etcd lease {@code id} (none when it is gone); empty where this client cannot tell. */
    default Optional<java.util.Set<String>> attached(long id) throws IOException {
        return Optional.empty();
    }

    /** Revokes etcd lease {@code id}, deleting the keys attached to it; one already gone is no error. */
    void revoke(long id) throws IOException;

    /** A key written or deleted at {@code revision}, as a prefix watch saw it. */
    record Change(String key, long revision) {
    }

    /**
     * What a prefix watch hands on, answer by answer: its changes in order (none: etcd says how far
     * it has seen), and etcd's revision then.
     */
    interface Changes {
        void seen(long revision, List<Change> changes);
    }

    /**
     * Watches every key that starts with {@code prefix} from after {@code afterRevision} on one
     * stream, handing each answer to {@code changes} in order. The future completes normally when
     * etcd ends the watch so that anything may have changed unseen (compacted past
     * {@code afterRevision}), exceptionally when the watch breaks or etcd cancels it for another
     * reason (it would be canceled again: the caller backs off); cancel it to stop.
     */
    CompletableFuture<Void> watchPrefix(String prefix, long afterRevision, Changes changes);

    /** Where this client connects, for messages and a child's environment; never a password. */
    String endpoints();

    /** The id of the cluster the first answer that named one named; empty before. */
    default Optional<String> cluster() {
        return Optional.empty();
    }

    /** Stops watches; later calls may fail. */
    @Override
    void close();
}
