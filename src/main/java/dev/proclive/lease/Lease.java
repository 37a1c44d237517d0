package dev.proclive.lease;

import dev.proclive.Identity;
import java.io.IOException;
import java.util.Optional;

/**
 * A granted lease: its name, its fence and its holder. Check {@link #ensureValid()} right before a
 * write it protects, pass {@link #fence()} along with the write so the resource can refuse a stale
 * holder's late one, and {@link #release()} (or close) when done. While this JVM lives its store
 * keeps it fresh, for all its leases at once (over a directory its session file names it, written
 * every third of the TTL; on etcd its etcd lease's keep-alive), until it is released, ended or
 * found lost ({@link #lost()} says when, and why); {@link #renew()} rewrites the record by hand.
 * A reserved lease ({@link LeaseStore#reserve}) is {@linkplain #handOff handed off} to the process
 * it was reserved for once that runs. Thread-safe.
 */
public interface Lease extends AutoCloseable {

    /** The lease's name. */
    String name();

    /** The fence of this grant: higher than any granted before it. */
    long fence();

    /** The process the lease is held for; of a reservation, its reserver. */
    Identity holder();

    /** Held, or reserved for a process about to start. */
    LeaseRecord.State state();

    /**
     * The reservation's token (32 lowercase hex digits), which the process it is for finds in its
     * environment: known to the lease that reserved or claimed it, never written to the record
     * (which holds its digest). Empty for a lease that was neither.
     */
    Optional<String> token();

    /** The record as this lease last wrote it. */
    LeaseRecord record();

    /**
     * Renews the lease: {@code renewedAt} becomes now, the TTL the record promised kept.
     *
     * @return the record written
     * @throws LeaseLostException if the record no longer carries this fence and holder, or is released
     * @throws IOException        if the files cannot be read or written
     */
    LeaseRecord renew() throws IOException;

    /**
     * Releases the lease if it is still this one's; the record says it ended as {@code released}.
     *
     * @return true if it is released at this fence now (also when it already was); false, and
     *         nothing written, when the record is gone or another grant's
     * @throws IOException if the files cannot be read or written
     */
    boolean release() throws IOException;

    /**
     * Ends the lease because its holder, a process this one started, exited with {@code exitCode}:
     * the record says {@code exited} and keeps the status. A lease from a reservation is not ended
     * while a process still carries its token (the holder daemonised: forked and exited): the
     * outermost carrier found becomes the holder instead, and this returns false; so too while
     * processes keep ending under the scan for carriers.
     *
     * @return as {@link #release()}
     * @throws IOException if the files cannot be read or written
     */
    boolean exited(int exitCode) throws IOException;

    /**
     * Hands the lease to {@code newHolder}, which must be ALIVE: from a reservation the fence is
     * kept (the reserver never wrote under it), from a held lease the new holder gets the next
     * fence (the old writer's late writes must be refused). This lease is no longer valid after.
     *
     * @return the new holder's lease
     * @throws IllegalArgumentException if {@code newHolder} is not ALIVE
     * @throws LeaseLostException       if this lease is no longer this grant's
     * @throws IOException              if the files cannot be read or written
     */
    Lease handOff(Identity newHolder) throws IOException;

    /**
     * Whether the record on disk still carries this fence and holder, held: whether a write under
     * {@link #fence()} may go ahead. A {@linkplain LeaseRecord.State#RESERVED reserved} lease admits
     * no write (its fence becomes the child's at the hand-off, so a reserver's late write would
     * carry it): false. Takes no lock.
     */
    boolean isValid() throws IOException;

    /**
     * Re-reads the record, for a check right before a protected write. A lease already known lost
     * ({@link #lost()} done) is not read again: it says the reason it was lost for first (a holder
     * that died, say, though another holds the lease now).
     *
     * @throws LeaseLostException if the lease is no longer this one's, carrying why
     */
    void ensureValid() throws IOException;

    /**
     * Completes the moment this JVM knows the grant is gone — taken over, broken, expired,
     * unconfirmed for three quarters of its TTL, its holder ended, its record removed — with why
     * ({@link LeaseLost#why()}) and the record that shows it. The store looks for it while it keeps
     * the lease: a directory's record is looked at every quarter second (read when its file was
     * replaced since), an etcd record read when its watch
     * says it changed, so a loss is known within a second of its write. Never completes for a lease
     * released or handed off through this JVM, nor after its store is closed. Each call returns a
     * new future: cancelling one cancels nothing else. What depends on it runs on a thread of the
     * JDK's asynchronous pool, never the store's: a callback that blocks holds up no other loss.
     *
     * <pre>{@code
     * lease.lost().thenAccept(l -> writer.stop(l.detail()));   // a writer without its lease steps down
     * }</pre>
     */
    java.util.concurrent.CompletableFuture<LeaseLost> lost();

    /**
     * Whether this JVM already knows the grant lost, without asking anyone: its store's renewal
     * found it taken over, broken or gone; on etcd also its keep-alive or its record's renewal has
     * not been confirmed for three quarters of its TTL (etcd may let it expire, or a newcomer take
     * it, any moment), or etcd said the lease is gone. Cheap, for a timer that steps a writer down
     * at once; false says nothing more ({@link #isValid()} reads the record).
     */
    boolean knownLost();

    /** {@link #release()}. */
    @Override
    void close() throws IOException;
}
