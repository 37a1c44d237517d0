package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.spi.internal.Elapsed;
import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/** The engine's waits: a waiter is queued in the order it came, woken by the holder's end or the record's change. */
final class Waiting {

    /** While waiting for a holder's exit, how often a release without an exit is looked for. */
    private static final Duration RECHECK = Duration.ofSeconds(2);
    /** The least a lock is waited for in a wait's last moment: a section takes milliseconds. */
    private static final Duration LAST_LOCK = Duration.ofMillis(100);
    /** How long setting a ticket's time again waits for the lock: it is set again at the next look. */
    private static final Duration TICKET_LOCK = Duration.ofMillis(250);
    private static final Duration QUEUED_RECHECK = Duration.ofMillis(200);
    /** A clock seen going back (libfaketime steps the monotonic one too) costs a deadline one slice at most. */
    private static final Duration NAP_SLICE = Duration.ofMillis(250);

    private final LeaseBook book;
    private final LivenessChecker checker;
    private final Pause pause;
    private final WaiterQueue queue;
    /** The store's time, to the millisecond: a ticket's end is a date. */
    private final Supplier<Instant> now;
    /** The deadline of the wait this thread is in, if any: a lock is waited for no longer than the caller waits. */
    private final ThreadLocal<Elapsed> waitingUntil = new ThreadLocal<>();

    Waiting(LeaseBook book, LivenessChecker checker, Pause pause, WaiterQueue queue, Supplier<Instant> now) {
        this.book = book;
        this.checker = checker;
        this.pause = pause;
        this.queue = queue;
        this.now = now;
    }

    /**
     * Asks again while {@link Acquisition.Held} or an {@link Acquisition.Undecided} that may change, until {@code wait}
     * passes on the pause's clock; a writer stuck in its section ends it at the deadline with an {@link IOException}.
     *
     * @throws InterruptedIOException if the thread is interrupted while waiting
     */
    Acquisition waiting(String name, Identity who, Duration wait, Ask ask) throws IOException {
        Duration bound = wait.isNegative() ? Duration.ZERO : wait;
        Elapsed deadline = Elapsed.bounded(bound, pause::nanoTime);
        Elapsed outer = waitingUntil.get();
        // a call that does not wait waits for the lease's lock as long as any such call (LeaseFiles.LOCK_WAIT)
        waitingUntil.set(bound.isZero() ? null : deadline);
        boolean queued = false;
        try {
            Acquisition a = ask.get();
            if (a instanceof Acquisition.Granted) {
                return a; // asked again, it would answer this same grant "again", with itself as the previous record
            }
            Instant until = now().plus(bound);
            if (!deadline.over() && checker.explain(who).liveness() == Liveness.ALIVE) {
                // the ticket's end is a date, as other processes read it; this waiter's deadline stays monotonic
                queue.enqueue(name, who, now(), until, lockBound().orElseThrow());
                queued = true;
            }
            return waitInQueue(name, who, until, queued, deadline, a, ask);
        } finally {
            waitingUntil.set(outer);
            if (outer == null) {
                waitingUntil.remove();
            }
            if (queued) {
                queue.dequeue(name, who); // granted, or gave up: the next in line is not held up
            }
        }
    }

    /** Asks again while waiting: a lock that stays another's for the rest of the wait ends it with {@code last}. */
    private static Acquisition askAgain(Ask ask, Acquisition last) throws IOException {
        try {
            return ask.get();
        } catch (FileLocker.Busy busy) {
            return last;
        }
    }

    /** The rest of this thread's wait (at least {@link #LAST_LOCK}); empty outside a wait. */
    Optional<Duration> lockBound() {
        Elapsed until = waitingUntil.get();
        if (until == null) {
            return Optional.empty();
        }
        Duration left = until.left();
        return Optional.of(left.compareTo(LAST_LOCK) < 0 ? LAST_LOCK : left);
    }

    private Acquisition waitInQueue(String name, Identity who, Instant until, boolean queued, Elapsed deadline,
                                    Acquisition first, Ask ask) throws IOException {
        Acquisition a = first;
        Duration recheck = Duration.ofMillis(25);
        while (true) {
            Duration left = deadline.left();
            if (left.isNegative() || left.isZero()
                    || !(a instanceof Acquisition.Held || a instanceof Acquisition.Undecided)) {
                return a; // granted, or an answer no wait changes: its ticket is not set again
            }
            try {
                book.stillWaiting(name); // a ticket on an expiring lease stays while its waiter waits
                if (queued) {
                    queue.stillWaiting(name, who, now(), until, TICKET_LOCK);
                }
            } catch (IOException | IllegalStateException e) {
                // it may lapse: the waiter still asks, and is served when nobody is ahead
            }
            Duration nap = min(left, RECHECK);
            // A book's watch (etcd) starts after the newest revision this store read on any thread, maybe newer than
            // the last answer here: made first, the answer asked after it, no change falls between.
            Optional<CompletableFuture<Void>> changed = book.changed(name);
            try {
                if (changed.isPresent()) {
                    a = askAgain(ask, a);
                }
                if (a instanceof Acquisition.Held held && (!held.record().granted()
                        || checker.explain(held.record().holder()).liveness() != Liveness.ALIVE)) {
                    // Free, but another waiter is ahead in the queue: look again soon, as it takes its turn.
                    nap(deadline, min(recheck, nap), changed);
                    recheck = doubled(recheck, QUEUED_RECHECK);
                } else if (a instanceof Acquisition.Held held) {
                    awaitEnd(deadline, held.record().holder(), nap, changed);
                } else if (a instanceof Acquisition.Undecided u) {
                    Optional<Duration> eligible = u.eligibleAt().map(at -> Duration.between(now(), at).plusMillis(1))
                            .filter(wait -> wait.compareTo(left) <= 0);
                    if (eligible.isPresent()) {
                        nap(deadline, min(eligible.get(), nap), changed);
                    } else {
                        // DEAD, its token not proven unused (its launcher may be ending the record, or the scan's gap
                        // may close), or UNKNOWN here and may still let go in time: look again, soon at first.
                        nap(deadline, min(recheck, nap), changed);
                        recheck = doubled(recheck, RECHECK);
                    }
                } else {
                    return a;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for lease " + a);
            } finally {
                changed.ifPresent(c -> c.cancel(false));
            }
            if (changed.isEmpty()) {
                a = askAgain(ask, a);
            }
        }
    }

    /** Capped: doubled without a cap, it overflowed {@code Duration} after about 70 looks. */
    static Duration doubled(Duration recheck, Duration cap) {
        return min(recheck.multipliedBy(2), cap);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) < 0 ? a : b;
    }

    /** Waits at most {@code most} for {@code holder} to end, or for the lease's record to change. */
    private void awaitEnd(Elapsed deadline, Identity holder, Duration most, Optional<CompletableFuture<Void>> changed)
            throws InterruptedException {
        CompletableFuture<Verdict> end = checker.onExit(holder);
        try {
            nap(deadline, most, Optional.of(changed.isPresent() ? CompletableFuture.anyOf(end, changed.get()) : end));
        } finally {
            end.cancel(false);
        }
    }

    /** Waits at most {@code most}, or until {@code wake}, in slices between which {@code deadline} is counted too. */
    private void nap(Elapsed deadline, Duration most, Optional<? extends CompletableFuture<?>> wake)
            throws InterruptedException {
        Elapsed napped = Elapsed.bounded(most, pause::nanoTime);
        while (wake.isEmpty() || !wake.get().isDone()) {
            long left = Math.min(napped.leftNanos(), deadline.leftNanos());
            if (left <= 0) {
                return;
            }
            Duration slice = left < NAP_SLICE.toNanos() ? Duration.ofNanos(left) : NAP_SLICE;
            if (wake.isEmpty()) {
                pause.sleep(slice);
            } else {
                pause.await(wake.get(), slice);
            }
        }
    }

    private Instant now() {
        return now.get();
    }
}
