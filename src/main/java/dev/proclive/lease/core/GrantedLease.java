package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.lease.Lease;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeaseRecord;
import java.io.IOException;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A {@link Lease} as the engine grants it: its name, fence, holder and token, the record it last
 * wrote, and the keeper that renews, ends and hands it off. Thread-safe.
 */
public final class GrantedLease implements Lease {

    private final LeaseKeeper keeper;
    private final String name;
    private final long fence;
    private final Identity holder;
    private final Optional<String> token;
    /** What the kernel tracks of the command this lease was handed to, when it was spawned so. */
    private final Tracking tracking;
    private volatile LeaseRecord record;

    GrantedLease(LeaseKeeper keeper, LeaseRecord record, Optional<String> token) {
        this(keeper, record, token, Tracking.NONE);
    }

    private GrantedLease(LeaseKeeper keeper, LeaseRecord record, Optional<String> token, Tracking tracking) {
        this.keeper = keeper;
        this.name = record.name();
        this.fence = record.fence();
        this.holder = record.holder();
        this.token = token;
        this.record = record;
        this.tracking = tracking;
    }

    /** This lease, its holder's descendants tracked by {@code how}: its {@link #exited} asks the kernel first. */
    GrantedLease tracked(Tracking how) {
        return new GrantedLease(keeper, record, token, how);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long fence() {
        return fence;
    }

    @Override
    public Identity holder() {
        return holder;
    }

    @Override
    public LeaseRecord.State state() {
        return record.state();
    }

    @Override
    public Optional<String> token() {
        return token;
    }

    @Override
    public LeaseRecord record() {
        return record;
    }

    @Override
    public LeaseRecord renew() throws IOException {
        LeaseRecord renewed = keeper.grants().renew(name, fence, Optional.of(holder));
        record = renewed;
        return renewed;
    }

    @Override
    public boolean release() throws IOException {
        keeper.stopRenewing(name, fence);
        boolean released = keeper.grants().end(name, fence, Optional.of(holder), LeaseRecord.Ending.How.RELEASED,
                OptionalLong.empty());
        keeper.unwatch(name, fence);
        return released;
    }

    @Override
    public boolean exited(int exitCode) throws IOException {
        keeper.stopRenewing(name, fence); // its holder is gone: what it left behind is judged, not renewed
        if (tracking.tracks()) {
            return keeper.grants().commandExited(name, fence, holder, OptionalLong.of(exitCode), tracking);
        }
        return keeper.grants().end(name, fence, Optional.of(holder), LeaseRecord.Ending.How.EXITED, OptionalLong.of(exitCode));
    }

    @Override
    public Lease handOff(Identity newHolder) throws IOException {
        return new GrantedLease(keeper, keeper.handOff(name, fence, holder, newHolder), token);
    }

    @Override
    public boolean knownLost() {
        return keeper.lost(name, fence);
    }

    @Override
    public boolean isValid() throws IOException {
        if (keeper.lost(name, fence)) {
            return false;
        }
        Optional<LeaseRecord> now = keeper.read(name);
        return now.isPresent() && now.get().held() && now.get().fence() == fence
                && LeaseRules.sameProcess(now.get().holder(), holder);
    }

    @Override
    public void ensureValid() throws IOException {
        if (!isValid()) {
            throw new LeaseLostException(name, "the record no longer carries fence " + fence + " held by pid "
                    + holder.pid() + " (a reserved lease admits no write until it is handed off)");
        }
    }

    /** {@link #release()}. */
    @Override
    public void close() throws IOException {
        release();
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", fence " + fence + ", " + record.state().json() + " for pid " + holder.pid() + "]";
    }
}
