package dev.proclive.lease;

import dev.proclive.Identity;
import java.io.IOException;
import java.util.Optional;

/**
 * A granted lease: its name, its fence and its holder. Check {@link #ensureValid()} right before a
 * write it protects, pass {@link #fence()} along with the write so the resource can refuse a stale
 * holder's late one, {@link #renew()} within the TTL, and {@link #release()} (or close) when done.
 * Thread-safe.
 */
public final class Lease implements AutoCloseable {

    private final LeaseStore store;
    private final String name;
    private final long fence;
    private final Identity holder;
    private volatile LeaseRecord record;

    Lease(LeaseStore store, LeaseRecord record) {
        this.store = store;
        this.name = record.name();
        this.fence = record.fence();
        this.holder = record.holder();
        this.record = record;
    }

    /** The lease's name. */
    public String name() {
        return name;
    }

    /** The fence of this grant: higher than any granted before it. */
    public long fence() {
        return fence;
    }

    /** The process the lease is held for. */
    public Identity holder() {
        return holder;
    }

    /** The record as this lease last wrote it. */
    public LeaseRecord record() {
        return record;
    }

    /**
     * Renews the lease: {@code renewedAt} becomes now.
     *
     * @return the record written
     * @throws LeaseLostException if the record no longer carries this fence and holder, or is released
     * @throws IOException        if the files cannot be read or written
     */
    public LeaseRecord renew() throws IOException {
        LeaseRecord renewed = store.renew(name, fence, holder);
        record = renewed;
        return renewed;
    }

    /**
     * Releases the lease if it is still this one's.
     *
     * @return true if it is released at this fence now (also when it already was); false, and
     *         nothing written, when the record is gone or another grant's
     * @throws IOException if the files cannot be read or written
     */
    public boolean release() throws IOException {
        return store.release(name, fence, holder);
    }

    /** Whether the record on disk still carries this fence and holder, held. Takes no lock. */
    public boolean isValid() throws IOException {
        Optional<LeaseRecord> now = store.read(name);
        return now.isPresent() && now.get().held() && now.get().fence() == fence
                && LeaseStore.sameProcess(now.get().holder(), holder);
    }

    /**
     * Re-reads the record, for a check right before a protected write.
     *
     * @throws LeaseLostException if the lease is no longer this one's
     */
    public void ensureValid() throws IOException {
        if (!isValid()) {
            throw new LeaseLostException(name, "the record no longer carries fence " + fence + " held for pid "
                    + holder.pid());
        }
    }

    /** {@link #release()}. */
    @Override
    public void close() throws IOException {
        release();
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", fence " + fence + ", holder pid " + holder.pid() + "]";
    }
}
