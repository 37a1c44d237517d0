package dev.proclive.lease;

import dev.proclive.Identity;
import java.io.IOException;
import java.util.Optional;

/**
 * A granted lease: its name, fence and holder. Check {@link #ensureValid()} right before a write it protects, pass
 * {@link #fence()} with the write so the resource can refuse a stale holder's late one, and {@link #release()} (or
 * close) when done. While this JVM lives its store keeps it fresh (over a directory every third of its TTL, on etcd by
 * its etcd lease's keep-alive) until it is released, ended or found lost ({@link #lost()}). Thread-safe.
 */
public interface Lease extends AutoCloseable {

    String name();

    /** The fence of this grant: higher than any granted before it. */
    long fence();

    /** The process the lease is held for; of a reservation, its reserver. */
    Identity holder();

    /** Held, or reserved for a process about to start. */
    LeaseRecord.State state();

    /** The reservation's token (32 lowercase hex digits, never in the record); empty unless reserved or claimed. */
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
     * @return true if it is released at this fence now (also when it already was); false, and nothing written, when the
     *         record is gone or another grant's
     * @throws IOException if the files cannot be read or written
     */
    boolean release() throws IOException;

    /**
     * Ends the lease because its holder, a process this one started, exited with {@code exitCode}: the record says
     * {@code exited}, with the status. A lease from a reservation is not ended (this returns false) while a process
     * still carries its token (the holder daemonised: the outermost carrier becomes the holder), nor while processes
     * keep ending under the scan for carriers.
     *
     * @return as {@link #release()}
     * @throws IOException if the files cannot be read or written
     */
    boolean exited(int exitCode) throws IOException;

    /**
     * Hands the lease to {@code newHolder}, which must be ALIVE: from a reservation the fence is kept, from a held
     * lease the new holder gets the next one (so the old writer's late writes are refused). This lease is then invalid.
     *
     * @return the new holder's lease
     * @throws IllegalArgumentException if {@code newHolder} is not ALIVE
     * @throws LeaseLostException       if this lease is no longer this grant's
     * @throws IOException              if the files cannot be read or written
     */
    Lease handOff(Identity newHolder) throws IOException;

    /**
     * Whether the record still carries this fence and holder, held: whether a write under {@link #fence()} may go
     * ahead. False for a {@linkplain LeaseRecord.State#RESERVED reserved} lease, whose fence becomes the child's at the
     * hand-off. Takes no lock. False, not an error, when a read that failed finds the grant known lost meanwhile.
     */
    boolean isValid() throws IOException;

    /**
     * Re-reads the record, for a check right before a protected write. A lease already known lost ({@link #lost()}
     * done) is not read again: it throws for the first reason it was lost.
     *
     * @throws LeaseLostException if the lease is no longer this one's, carrying why
     * @throws IOException        if the record cannot be read (no etcd member answered) and the grant is not known lost
     */
    void ensureValid() throws IOException;

    /**
     * Completes the moment this JVM knows the grant is gone, with why ({@link LeaseLost#why()}): within a second of the
     * write that shows it, and as its store closes if it is still kept ({@code UNCONFIRMED}). Never completes for a
     * lease released or handed off through this JVM. Each call returns a new future: cancelling one cancels nothing
     * else. Dependents run on a thread of their own, not the store's nor the JDK's pool: one that blocks holds up no
     * other loss (only when no thread can be started is a loss told on the store's). On a future already complete
     * they run on the caller's thread.
     *
     * <pre>{@code
     * lease.lost().thenAccept(l -> writer.stop(l.detail()));   // a writer without its lease steps down
     * }</pre>
     */
    java.util.concurrent.CompletableFuture<LeaseLost> lost();

    /**
     * Whether this JVM already knows the grant lost, asking no one: found taken over, broken or gone, or (on etcd)
     * unconfirmed for three quarters of its TTL, when etcd may let it expire or a newcomer take it any moment. Cheap,
     * for a timer that steps a writer down at once; false says nothing more ({@link #isValid()} reads the record).
     */
    boolean knownLost();

    /** {@link #release()}. */
    @Override
    void close() throws IOException;
}
