package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.lease.Lease;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Daemons;
import dev.proclive.lease.book.Records;
import java.io.IOException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/** A {@link Lease} as the engine grants it. Thread-safe. */
final class GrantedLease implements Lease {

    /** Threads for losses told, idle ones reused: a dependent that blocks (a writer stopping) holds up no other. */
    private static final java.util.concurrent.Executor TOLD = Daemons.cached("proclive-lease-told");

    private final LeaseLife engine;
    private final KeptGrants keptGrants;
    private final String name;
    private final long fence;
    private final Identity holder;
    private final Optional<String> token;
    private final Tracking tracking;
    private volatile LeaseRecord record;
    /** Its loss, held here, so the store need not keep it for a lease nobody holds. */
    private final CompletableFuture<LeaseLost> lost;
    /** Whether it was released or handed off through this lease: then it is never lost. */
    private volatile boolean letGo;

    /**
     * A grant written here, kept by the store. Order matters: its loss future exists first, then its record is watched,
     * then its holder, whose end may be written at once and must be seen by that watch.
     */
    static GrantedLease kept(LeaseLife engine, KeptGrants keptGrants, LeaseRecord record, Optional<String> token) {
        keptGrants.grantWritten(record.name(), record.fence(), record.holder());
        GrantedLease lease = new GrantedLease(engine, keptGrants, record, token, Tracking.NONE);
        keptGrants.keep(record);
        return lease;
    }

    private GrantedLease(LeaseLife engine, KeptGrants keptGrants, LeaseRecord record, Optional<String> token,
                         Tracking tracking) {
        this.engine = engine;
        this.keptGrants = keptGrants;
        this.name = record.name();
        this.fence = record.fence();
        this.holder = record.holder();
        this.token = token;
        this.record = record;
        this.tracking = tracking;
        this.lost = keptGrants.lost(name, fence, holder);
    }

    /** This lease, descendants tracked by {@code how}; its record names the cgroup, as the written one does. */
    GrantedLease tracked(Tracking how) {
        LeaseRecord named = how.cgroup().filter(c -> record.cgroup().isEmpty())
                .map(c -> Records.inCgroup(record, c)).orElse(record);
        return new GrantedLease(engine, keptGrants, named, token, how);
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
        try {
            LeaseRecord renewed = engine.renew(name, fence, Optional.of(holder));
            record = renewed;
            return renewed;
        } catch (LeaseLostException e) {
            keptGrants.found(name, fence, holder, e.lost());
            throw e;
        }
    }

    @Override
    public boolean release() throws IOException {
        letGo = true;
        CompletableFuture<LeaseLost> kept = keptGrants.release(name, fence, holder);
        boolean released = false;
        try {
            released = engine.end(name, fence, LeaseLife.End.as(LeaseChange.RELEASED, Optional.of(holder)));
        } finally {
            if (!released) {
                letGo = false;
                // not released by this call: its loss is still told, and another lease's of the grant
                keptGrants.unreleased(name, fence, holder, kept != null ? kept : lost);
            }
        }
        keptGrants.unfollow(name, fence);
        if (released && kept != null && kept != lost) { // the grant written again for its holder, released through this
            kept.complete(Losses.releasedThroughAnother(fence, Optional.of(holder)));
        }
        return released;
    }

    @Override
    public boolean exited(int exitCode) throws IOException {
        keptGrants.holderEnded(name, fence, holder); // its holder is gone: what it left behind is judged, not kept fresh
        boolean ended = engine.end(name, fence, LeaseLife.End.exited(holder, OptionalLong.of(exitCode), tracking));
        keptGrants.lookNow(name, fence, holder); // told at once: ended, or gone to what it left behind
        return ended;
    }

    @Override
    public Lease handOff(Identity newHolder) throws IOException {
        LeaseRecord handed = engine.handOff(name, fence, holder, newHolder);
        letGo = true;
        keptGrants.release(name, fence, holder);
        return kept(engine, keptGrants, handed, token);
    }

    @Override
    public CompletableFuture<LeaseLost> lost() {
        if (lost.isDone()) {
            return lost.copy();
        }
        // told off the look's thread (one for every kept grant): a blocking callback holds up no other loss
        CompletableFuture<LeaseLost> told = new CompletableFuture<>();
        lost.whenComplete((why, e) -> {
            if (e == null) {
                try {
                    told.completeAsync(() -> why, TOLD); // not the JDK's pool: its few threads may all be blocked
                } catch (Throwable noThread) { // no thread to be had: told here rather than never
                    told.complete(why);
                }
            } else {
                told.completeExceptionally(e);
            }
        });
        return told;
    }

    @Override
    public boolean knownLost() {
        return lost.isDone() || engine.book().lost(name, fence);
    }

    @Override
    public boolean isValid() throws IOException {
        if (knownLost()) {
            return false;
        }
        Optional<LeaseRecord> now;
        try {
            now = readUnlessLost();
        } catch (LeaseLostException lostMeanwhile) {
            return false;
        }
        // and not known lost since: an answer that came late may show what stood before the loss
        return now.isPresent() && now.get().held() && now.get().fence() == fence
                && Records.sameProcess(now.get().holder(), holder) && !knownLost();
    }

    /**
     * The record; a read that failed (no etcd member answered) once the grant is known lost throws that loss, the
     * failure suppressed in it: a writer told only that no member answered might write through another one.
     */
    private Optional<LeaseRecord> readUnlessLost() throws IOException {
        try {
            return engine.read(name);
        } catch (IOException e) {
            if (knownLost()) {
                LeaseLostException told = new LeaseLostException(name,
                        lost.getNow(Losses.unconfirmed(fence, Optional.of(holder))));
                told.addSuppressed(e);
                throw told;
            }
            throw e;
        }
    }

    @Override
    public void ensureValid() throws IOException {
        if (lost.isDone()) {
            throw new LeaseLostException(name, lost.join()); // lost once, for the first reason: what came after follows from it
        }
        Optional<LeaseRecord> now = readUnlessLost();
        Optional<LeaseLost> why = Losses.of(fence, Optional.of(holder), now, engine.book().expires());
        if (why.isPresent()) {
            // a reservation is not lost (it admits no write yet), nor a lease let go through this one
            if (!(now.isPresent() && now.get().fence() == fence && now.get().state() == LeaseRecord.State.RESERVED
                    && Records.sameProcess(now.get().holder(), holder))) {
                if (!letGo) {
                    lost.complete(why.get());
                }
                keptGrants.found(name, fence, holder, why.get());
            }
            throw new LeaseLostException(name, why.get());
        }
        if (knownLost()) { // unconfirmed, or lost since the read: the first reason known
            throw new LeaseLostException(name, lost.getNow(Losses.unconfirmed(fence, Optional.of(holder))));
        }
    }

    @Override
    public void close() throws IOException {
        release();
    }

    @Override
    public String toString() {
        return "Lease[" + name + ", fence " + fence + ", " + record.state().json() + " for pid " + holder.pid() + "]";
    }
}
