package dev.proclive.lease.core;

import dev.proclive.lease.book.Records;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseEvent;
import dev.proclive.lease.LeaseListener;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Daemons;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.Rounds;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Listeners' watches, run by one thread: a directory's record every {@value #POLL_MS} ms (read only once its stamp
 * changed), an etcd one when its watch fires and every second. The exit watch tells a holder's death nobody writes.
 */
final class RecordWatches {

    static final long POLL_MS = 100;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(POLL_MS);
    private static final long SECOND_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final LeaseLife engine;
    private final LeaseBook book;
    private final LivenessChecker checker;
    private final long everyNanos;
    private volatile boolean closed;
    private final Set<Watch> watches = ConcurrentHashMap.newKeySet();
    private final Rounds rounds = new Rounds("proclive-lease-events", this::lookAtDue, this::nextDue);

    RecordWatches(LeaseLife engine, LeaseBook book, LivenessChecker checker) {
        this.engine = engine;
        this.book = book;
        this.checker = checker;
        this.everyNanos = book.expires() ? SECOND_NANOS : POLL_NANOS;
    }

    /** Watches lease {@code name} from its record as it is now; closing what this returns stops it. */
    AutoCloseable watch(String name, LeaseListener listener) throws IOException {
        if (closed) {
            throw new IllegalStateException("the lease store is closed");
        }
        Optional<Object> stamp = stamp(book, name);
        Watch w = new Watch(name, listener, read(name));
        w.seen = stamp.orElse(null);
        w.dueAt = System.nanoTime() + POLL_NANOS;
        watches.add(w);
        if (closed) { // the store closed meanwhile: its close may not have seen this watch
            w.close();
            throw new IllegalStateException("the lease store is closed");
        }
        rounds.in(0); // its holder followed at the next run
        if (book.expires()) {
            w.arm();
        }
        return w;
    }

    /** The record's stamp, taken before it is read: empty when the book cannot tell (then it is read). */
    static Optional<Object> stamp(LeaseBook book, String name) {
        try {
            return book.stamp(name);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private Optional<LeaseRecord> read(String name) throws IOException {
        try {
            return engine.read(name);
        } catch (LeaseCorruptException corrupt) {
            return Optional.empty(); // nothing to be told of until a record can be trusted again
        }
    }

    private void lookAtDue() {
        long now = System.nanoTime();
        for (Watch w : watches) {
            Daemons.surviving(() -> w.lookIfDue(now)).run(); // one watch's failure is its own
        }
    }

    /** The soonest a watch is due; asked under the rounds' lock, so it takes none. */
    private OptionalLong nextDue() {
        OptionalLong soonest = OptionalLong.empty();
        for (Watch w : watches) {
            long at = w.dueAt;
            Long changed = w.changedAt;
            if (changed != null && changed - at < 0) {
                at = changed;
            }
            if (w.holderDied != null) {
                at = System.nanoTime();
            }
            if (soonest.isEmpty() || at - soonest.getAsLong() < 0) {
                soonest = OptionalLong.of(at);
            }
        }
        return soonest;
    }

    /** One listener's watch; what is not volatile is used on the rounds' run only, one run at a time. */
    private final class Watch implements AutoCloseable {
        final String name;
        final LeaseListener listener;
        Optional<LeaseRecord> last;
        /** The record's stamp when {@link #last} was read; null: read it at the next look. */
        Object seen;
        /** When the next look is due ({@link System#nanoTime()}). */
        volatile long dueAt;
        /** When etcd's watch said the record changed (or broke: a second later); null when it has not. */
        volatile Long changedAt;
        /** The grant whose holder the exit watch found dead, to be told. */
        volatile LeaseRecord holderDied;
        volatile CompletableFuture<Void> changed;
        volatile boolean stopped;
        /** The grant whose holder's end is watched, and the exit watch on it. */
        Optional<LeaseRecord> followed = Optional.empty();
        volatile CompletableFuture<Verdict> holderEnd;

        Watch(String name, LeaseListener listener, Optional<LeaseRecord> last) {
            this.name = name;
            this.listener = listener;
            this.last = last;
        }

        void lookIfDue(long now) {
            if (stopped) {
                return;
            }
            LeaseRecord died = holderDied;
            if (died != null) {
                holderDied = null;
                if (sameGrant(followed, Optional.of(died))) {
                    tell(new LeaseEvent(LeaseChange.HOLDER_DIED, died, Optional.empty()));
                    dueAt = now; // what was written since, after it
                }
            }
            Long changedNow = changedAt;
            boolean rearm = changedNow != null && now - changedNow >= 0;
            if (rearm) {
                changedAt = null;
                dueAt = now;
            }
            try {
                if (now - dueAt >= 0) {
                    dueAt = now + everyNanos;
                    look();
                }
            } finally {
                followHolder(); // a new watch's holder at its first run, whether or not it is due
                if (rearm && !stopped) {
                    arm(); // whatever the look met, the next change is watched for
                }
            }
        }

        private void look() {
            Optional<Object> stamp = stamp(book, name);
            if (stamp.isPresent() && stamp.get().equals(seen)) {
                return; // not replaced since it was read: nothing to tell
            }
            Optional<LeaseRecord> now;
            try {
                now = read(name);
            } catch (IOException | RuntimeException e) {
                seen = null;
                return; // looked at again next time
            }
            seen = stamp.orElse(null);
            List<LeaseEvent> events = between(last, now);
            last = now; // told once each, whatever the listener does with them
            events.forEach(this::tell);
        }

        /** Follows the end of the record's holder once it changes; another machine's is left to its record's expiry. */
        private void followHolder() {
            Optional<LeaseRecord> now = last.filter(LeaseRecord::granted);
            if (stopped || sameGrant(now, followed)) {
                return; // stopped: a listener closed its watch as it was told; nothing is left to cancel this one
            }
            CompletableFuture<Verdict> before = holderEnd;
            if (before != null) {
                before.cancel(false);
            }
            followed = now;
            holderEnd = null;
            if (now.isEmpty()) {
                return;
            }
            LeaseRecord granted = now.get();
            CompletableFuture<Verdict> end = checker.onExit(granted.holder());
            holderEnd = end;
            if (stopped) {
                end.cancel(false); // closed as it was made: the close may have cancelled the one before
            }
            end.thenAccept(verdict -> {
                if (verdict.liveness() == Liveness.DEAD && !stopped) {
                    holderDied = granted;
                    rounds.in(0);
                }
            });
        }

        /** A listener's throw, an {@code Error} too, is its own failure: it is told the next event all the same. */
        private void tell(LeaseEvent e) {
            if (stopped) {
                return; // the listener closed its watch: nothing more, not even the rest of this look
            }
            try {
                listener.changed(e);
            } catch (Throwable dropped) {
                // the watch goes on
            }
        }

        /** Has the record looked at when etcd's watch says it changed (a second later when the watch broke). */
        void arm() {
            Optional<CompletableFuture<Void>> c = book.changed(name);
            if (c.isEmpty()) {
                return;
            }
            changed = c.get();
            if (stopped) { // closed meanwhile: its close may have cancelled the one before, not this one
                c.get().cancel(false);
                return;
            }
            c.get().whenComplete((v, e) -> {
                if (stopped || closed) {
                    return;
                }
                long at = System.nanoTime() + (e == null ? 0 : SECOND_NANOS);
                changedAt = at;
                rounds.by(at);
            });
        }

        @Override
        public void close() {
            stopped = true;
            watches.remove(this);
            for (Future<?> f : new Future<?>[] {holderEnd, changed}) {
                if (f != null) {
                    f.cancel(false);
                }
            }
        }
    }

    private static boolean sameGrant(Optional<LeaseRecord> a, Optional<LeaseRecord> b) {
        if (a.isEmpty() || b.isEmpty()) {
            return a.isEmpty() && b.isEmpty();
        }
        return a.get().fence() == b.get().fence() && Records.sameProcess(a.get().holder(), b.get().holder());
    }

    /** Between two reads, oldest first: none for a renewal; a grant come and gone: GRANTED, then its end. Pure. */
    static List<LeaseEvent> between(Optional<LeaseRecord> before, Optional<LeaseRecord> after) {
        List<LeaseEvent> events = new ArrayList<>();
        if (after.isEmpty()) {
            if (before.isPresent() && before.get().granted()) {
                events.add(new LeaseEvent(LeaseChange.EXPIRED, before.get(), Optional.empty()));
            }
            return events;
        }
        LeaseRecord a = after.get();
        if (before.isPresent() && before.get().equals(a)) {
            return events;
        }
        boolean sameGrant = before.isPresent() && before.get().fence() == a.fence();
        if (a.granted()) {
            if (sameGrant && before.get().granted()) {
                if (!Records.sameProcess(before.get().holder(), a.holder())) {
                    events.add(new LeaseEvent(LeaseChange.GRANTED, a, before)); // handed off, claimed, adopted
                }
            } else if (a.previous().isPresent() && before.isPresent() && before.get().granted()) {
                events.add(new LeaseEvent(LeaseChange.TAKEN_OVER, a, before));
            } else {
                events.add(new LeaseEvent(LeaseChange.GRANTED, a, before));
            }
            return events;
        }
        if (sameGrant && !before.get().granted()) {
            return events; // ended before, and still (written again by a late writer): nothing new
        }
        if (!sameGrant) {
            events.add(new LeaseEvent(LeaseChange.GRANTED, a, before)); // came and went between two reads
        }
        LeaseChange how = a.ended().map(e -> e.how() == LeaseChange.SPAWN_FAILED ? LeaseChange.EXITED : e.how())
                .orElse(LeaseChange.RELEASED);
        events.add(new LeaseEvent(how, a, sameGrant ? before : Optional.empty()));
        return events;
    }

    /** Stops every watch; a run under way is interrupted. */
    void close() {
        closed = true;
        List.copyOf(watches).forEach(Watch::close);
        rounds.close(Duration.ZERO);
    }
}
