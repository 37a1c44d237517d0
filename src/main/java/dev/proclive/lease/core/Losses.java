package dev.proclive.lease.core;

import dev.proclive.lease.book.Records;
import dev.proclive.Identity;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseRecord;
import java.util.Optional;

/** Why a grant is no longer its holder's, read from the record there is now. Pure. */
final class Losses {

    private Losses() {
    }

    /** Empty while the grant is still held; {@code expires} when records go away by themselves (etcd). */
    static Optional<LeaseLost> of(long fence, Optional<Identity> holder, Optional<LeaseRecord> now, boolean expires) {
        String mine = grant(fence, holder);
        if (now.isEmpty()) {
            return Optional.of(expires
                    ? new LeaseLost(LeaseChange.EXPIRED, now, mine + " is gone: its record expired, nobody kept it alive")
                    : new LeaseLost(LeaseChange.REMOVED, now, mine + " is gone: there is no record (it was removed)"));
        }
        LeaseRecord r = now.get();
        boolean same = r.fence() == fence && holder.map(h -> Records.sameProcess(r.holder(), h)).orElse(true);
        if (same && r.held()) {
            return Optional.empty();
        }
        if (same && r.state() == LeaseRecord.State.RESERVED) {
            return Optional.of(new LeaseLost(LeaseChange.UNCONFIRMED, now, mine
                    + " is reserved: a reserved lease admits no write until it is handed off"));
        }
        if (r.fence() == fence && r.ended().isPresent()) {
            LeaseRecord.Ending e = r.ended().get();
            String at = " at " + Records.timestamp(e.at()) + " (written by pid " + r.writer().pid() + ")";
            if (e.how() == LeaseChange.BROKEN) {
                return Optional.of(new LeaseLost(LeaseChange.BROKEN, now,
                        mine + " was broken by an operator (lease break)" + at));
            }
            if (e.how() == LeaseChange.RELEASED) {
                return Optional.of(new LeaseLost(LeaseChange.REMOVED, now, mine + " was released" + at));
            }
            String status = e.exitCode().stream().mapToObj(c -> ", status " + c).findFirst().orElse("");
            return Optional.of(new LeaseLost(LeaseChange.HOLDER_DIED, now, mine + " ended as " // exited, spawn_failed
                    + e.how().json() + at + status));
        }
        if (r.fence() == fence && !r.granted()) { // released with no word of how (a grant nobody was told of)
            return Optional.of(new LeaseLost(LeaseChange.REMOVED, now, mine + " was released (written by pid "
                    + r.writer().pid() + ")"));
        }
        if (r.fence() == fence && r.state() == LeaseRecord.State.RESERVED) {
            // read before the hand-off showed: at one fence, a record never goes back from held to reserved
            return Optional.empty();
        }
        if (r.fence() == fence) {
            return Optional.of(new LeaseLost(LeaseChange.TAKEN_OVER, now, mine + " was handed to pid " + r.holder().pid()));
        }
        if (r.previous().map(p -> p.fence() == fence).orElse(false)) {
            LeaseRecord.Takeover t = r.previous().get();
            return Optional.of(new LeaseLost(LeaseChange.TAKEN_OVER, now, mine + " was taken over by pid "
                    + r.holder().pid() + " at fence " + r.fence() + " because its holder was "
                    + t.verdict().liveness().json() + " (" + t.verdict().reason().json() + ")"));
        }
        if (r.fence() > fence) {
            return Optional.of(new LeaseLost(LeaseChange.TAKEN_OVER, now, mine + " is no longer the record's: it is "
                    + r.state().json() + " at fence " + r.fence() + " for pid " + r.holder().pid()));
        }
        return Optional.of(new LeaseLost(LeaseChange.REMOVED, now, mine + " is no longer the record's: it was replaced"
                + " by one at fence " + r.fence() + " (" + r.state().json() + ", pid " + r.holder().pid() + ")"));
    }

    static LeaseLost unconfirmed(long fence, Optional<Identity> holder) {
        return new LeaseLost(LeaseChange.UNCONFIRMED, Optional.empty(), grant(fence, holder) + " is lost: its"
                + " keep-alive or its renewal was not confirmed for three quarters of its TTL, and someone else may be"
                + " granted it");
    }

    /** Unconfirmed for {@code why}, which its book knows (etcd went back: what it said), not for want of answers. */
    static LeaseLost unconfirmed(long fence, Optional<Identity> holder, String why) {
        return new LeaseLost(LeaseChange.UNCONFIRMED, Optional.empty(), grant(fence, holder) + " is lost: " + why);
    }

    /** Released through a lease of the grant as it was before it was written again for its holder. */
    static LeaseLost releasedThroughAnother(long fence, Optional<Identity> holder) {
        return new LeaseLost(LeaseChange.RELEASED, Optional.empty(), grant(fence, holder) + " was released through"
                + " another lease of the same grant: the one its holder had before it asked for it again");
    }

    /** A grant made as its store closed: nothing keeps it. */
    static LeaseLost closed(long fence, Optional<Identity> holder) {
        return new LeaseLost(LeaseChange.UNCONFIRMED, Optional.empty(), grant(fence, holder) + " is not kept: it was"
                + " granted as its lease store closed, so nothing keeps it alive, and someone else may be granted it");
    }

    static LeaseLost storeClosed(long fence, Optional<Identity> holder) {
        return new LeaseLost(LeaseChange.UNCONFIRMED, Optional.empty(), grant(fence, holder) + " is not kept: its lease"
                + " store was closed before it was released, so nothing keeps it alive, and someone else may be granted"
                + " it once its TTL has run out");
    }

    private static String grant(long fence, Optional<Identity> holder) {
        return "fence " + fence + holder.map(h -> " of pid " + h.pid()).orElse("");
    }
}
