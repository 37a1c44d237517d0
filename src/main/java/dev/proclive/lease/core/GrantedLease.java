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
        Optional<LeaseRecord> now = keeper.read(name);
        if (now.isEmpty() || !now.get().held() || now.get().fence() != fence
                || !LeaseRules.sameProcess(now.get().holder(), holder)) {
            throw new LeaseLostException(name, whyNot(now)); // what happened to it, read from the record
        }
        if (keeper.lost(name, fence)) {
            throw new LeaseLostException(name, "fence " + fence + " of pid " + holder.pid() + " is lost: its keep-alive"
                    + " or its renewal was not confirmed for three quarters of its TTL, and someone else may be granted it");
        }
    }

    /** Why the record {@code now} admits no write under this grant, in words: what happened to it. */
    private String whyNot(Optional<LeaseRecord> now) {
        String mine = "fence " + fence + " of pid " + holder.pid();
        if (now.isEmpty()) {
            return mine + " is gone: there is no record (it expired, or was removed)";
        }
        LeaseRecord r = now.get();
        if (r.fence() == fence && r.state() == LeaseRecord.State.RESERVED) {
            return mine + " is reserved: a reserved lease admits no write until it is handed off";
        }
        if (r.fence() == fence && r.ended().isPresent()) {
            LeaseRecord.Ending e = r.ended().get();
            return mine + (e.how() == LeaseRecord.Ending.How.BROKEN ? " was broken by an operator (lease break)"
                    : " ended as " + e.how().json()) + " at " + LeaseRecord.timestamp(e.at());
        }
        if (r.fence() == fence) {
            return mine + " was handed to pid " + r.holder().pid();
        }
        if (r.previous().map(p -> p.fence() == fence).orElse(false)) {
            LeaseRecord.Takeover t = r.previous().get();
            return mine + " was taken over by pid " + r.holder().pid() + " at fence " + r.fence() + " because its holder"
                    + " was " + t.verdict().liveness().json() + " (" + t.verdict().reason().json() + ")";
        }
        return mine + " is no longer the record's: it is " + r.state().json() + " at fence " + r.fence()
                + " for pid " + r.holder().pid();
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
