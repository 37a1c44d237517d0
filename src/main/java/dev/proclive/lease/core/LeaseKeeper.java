package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseListener;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Cgroup;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.spi.internal.Elapsed;
import dev.proclive.spi.internal.FileLocker;
import dev.proclive.spi.internal.KernelIntrospector;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The engine: the store's work on one lease. Lock it and let {@link Grants} decide, write and
 * answer as the API does; it also waits, spawns, and keeps grants. It knows its book only through
 * the seam ({@link LeaseBook}).
 */
public final class LeaseKeeper implements AutoCloseable {

    /** While waiting for a holder's exit, how often a release without an exit is looked for. */
    private static final Duration RECHECK = Duration.ofSeconds(2);
    /** The least a lock is waited for in a wait's last moment: a section takes milliseconds. */
    private static final Duration LAST_LOCK = Duration.ofMillis(100);
    /** How often a waiter queued behind another looks again, at most. */
    private static final Duration QUEUED_RECHECK = Duration.ofMillis(200);
    /** How old an empty, unnamed cgroup of this library must be before a sweep removes it. */
    private static final Duration STRAY_AGE = Duration.ofSeconds(30);
    /** The longest one wait of a nap lasts before the wait's own deadline is looked at again. */
    private static final Duration NAP_SLICE = Duration.ofMillis(250);

    private final LeaseBook book;
    private final LeasePolicy policy;
    private final Identity writer;
    private final LivenessChecker checker;
    private final Pause pause;
    private final TokenCarriers carriers;
    private final Grants grants;
    private final Descendants descendants;
    private final HolderWatches watches;
    private final Renewals renewals;
    private final GrantedLease.Parts parts;
    private final RecordWatches events;
    private final WaiterQueue queue;
    /** The deadline of the wait this thread is in, if any: a lock is waited for no longer than the caller waits. */
    private final ThreadLocal<Elapsed> waitingUntil = new ThreadLocal<>();

    /** {@code writer}: this process; {@code clock} dates records, {@code pause} bounds waits. */
    public LeaseKeeper(LeaseBook book, LeasePolicy policy, Identity writer, LivenessChecker checker, Clock clock,
                       Pause pause, Descendants descendants) {
        this.book = book;
        this.policy = policy;
        this.writer = writer;
        this.checker = checker;
        this.pause = pause;
        this.descendants = descendants;
        this.carriers = new TokenCarriers(checker, descendants);
        this.grants = new Grants(book, policy, writer, checker, clock, carriers, descendants);
        this.renewals = new Renewals(grants, book);
        this.watches = new HolderWatches(grants, book, checker, writer);
        this.parts = new GrantedLease.Parts(grants, book, renewals, watches);
        this.queue = new WaiterQueue(book, checker, writer);
        this.events = new RecordWatches(grants, book, checker);
    }

    public AutoCloseable watch(String name, LeaseListener listener) throws IOException {
        return events.watch(name, listener);
    }

    public LeasePolicy policy() {
        return policy;
    }

    public Acquisition acquire(String name, Identity holder) throws IOException {
        return ask(name, holder, LeaseRules.Request.acquire(holder));
    }

    public Acquisition reserve(String name, Identity reserver) throws IOException {
        return ask(name, reserver, LeaseRules.Request.reserve(reserver));
    }

    public Acquisition claim(String name, String token, Identity holder) throws IOException {
        Verdict alive = checker.explain(holder);
        if (alive.liveness() != Liveness.ALIVE) {
            return new Acquisition.NotAlive(alive);
        }
        Optional<Boolean> carries = carriers.carries(holder, token);
        if (carries.isPresent() && !carries.get()) {
            return new Acquisition.NotCarrier(alive);
        }
        return request(name, LeaseRules.Request.claim(holder, token, carries.isPresent()));
    }

    private Acquisition ask(String name, Identity who, LeaseRules.Request request) throws IOException {
        Verdict alive = checker.explain(who);
        if (alive.liveness() != Liveness.ALIVE) {
            return new Acquisition.NotAlive(alive);
        }
        return request(name, request);
    }

    /** What {@link #waiting} asks again. */
    public interface Ask {
        Acquisition get() throws IOException;
    }

    /**
     * Asks, and while the answer is {@link Acquisition.Held} (or {@link Acquisition.Undecided}
     * with an {@code eligibleAt} within the wait, or over a DEAD holder whose token could not be
     * proven unused), waits and asks again, until {@code wait} has passed on the pause's monotonic
     * clock (a wall clock stepped back never stretches it). The lease's lock is waited for within
     * the same bound: a writer stopped inside its section makes the wait end with an
     * {@link IOException} at the deadline, never later.
     *
     * @throws InterruptedIOException if the thread is interrupted while waiting
     */
    public Acquisition waiting(String name, Identity who, Duration wait, Ask ask) throws IOException {
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
            if (!deadline.over() && checker.explain(who).liveness() == Liveness.ALIVE) {
                // served in order from now on. The ticket's end is a date (other processes read it);
                // its waiter's own deadline stays monotonic.
                queue.enqueue(name, who, now().plus(bound), lockBound().orElseThrow());
                queued = true;
            }
            return waitInQueue(name, deadline, a, ask);
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
    private Optional<Duration> lockBound() {
        Elapsed until = waitingUntil.get();
        if (until == null) {
            return Optional.empty();
        }
        Duration left = until.left();
        return Optional.of(left.compareTo(LAST_LOCK) < 0 ? LAST_LOCK : left);
    }

    private Acquisition waitInQueue(String name, Elapsed deadline, Acquisition first, Ask ask) throws IOException {
        Acquisition a = first;
        Duration recheck = Duration.ofMillis(25);
        while (true) {
            Duration left = deadline.left();
            if (left.isNegative() || left.isZero()) {
                return a;
            }
            try {
                book.stillWaiting(name); // a ticket on an expiring lease stays while its waiter waits
            } catch (IOException e) {
                // it may lapse: the waiter still asks, and is served when nobody is ahead
            }
            Duration nap = min(left, RECHECK);
            // Where the book tells of changes (etcd), its watch starts after the latest revision this
            // store read on any thread, which may be newer than the answer last given here: the
            // watch is made first and the answer waited on is asked after it, so that no change
            // falls between the two.
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
                } else if (a instanceof Acquisition.Undecided u && u.eligibleAt().isPresent()) {
                    Duration until = Duration.between(now(), u.eligibleAt().get()).plusMillis(1);
                    if (until.compareTo(left) > 0) {
                        return a;
                    }
                    nap(deadline, min(until, nap), changed);
                } else if (a instanceof Acquisition.Undecided u && u.verdict().liveness() == Liveness.DEAD) {
                    // Its holder is DEAD but a scan could not prove its token unused: its launcher
                    // may be ending the record this moment, or the processes that made the scan
                    // incomplete may end. Look again, soon at first.
                    nap(deadline, min(recheck, nap), changed);
                    recheck = doubled(recheck, RECHECK);
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

    /**
     * Twice {@code recheck}, at most {@code cap}: a wait of any length backs off to the cap and
     * stays there (doubled without one, it overflowed {@code Duration} after about 70 looks).
     */
    static Duration doubled(Duration recheck, Duration cap) {
        return min(recheck.multipliedBy(2), cap);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) < 0 ? a : b;
    }

    public Acquisition spawn(String name, ProcessBuilder command, Duration wait) throws IOException {
        boolean subreaper = policy.trackDescendants() && descendants.becomeSubreaper();
        Acquisition a = waiting(name, writer, wait, () -> ask(name, writer, LeaseRules.Request.reserve(writer)));
        if (!(a instanceof Acquisition.Granted granted)) {
            return a;
        }
        GrantedLease reserved = (GrantedLease) granted.lease();
        Optional<Cgroup> cgroup = policy.trackDescendants() ? cgroupFor(reserved) : Optional.empty();
        Tracking tracking = new Tracking(descendants, subreaper, cgroup,
                KernelIntrospector.of(checker.introspector()).startFloor());
        return new Spawner(grants, checker, reserved, tracking).start(command, book.environment());
    }

    /**
     * A new cgroup for the command of {@code reserved}, made only now that the lease is granted and
     * named in its record before anything enters it; empty where none can be made or named (the
     * command then runs without one).
     */
    private Optional<Cgroup> cgroupFor(GrantedLease reserved) {
        String store = LeaseNames.storeTag(book.environment());
        Optional<String> path = descendants.newCgroup(reserved.name(), store);
        if (path.isEmpty()) {
            return Optional.empty();
        }
        sweep(store, path.get());
        Optional<String> id = descendants.cgroupId(path.get());
        try {
            if (id.isPresent()) {
                Cgroup cgroup = new Cgroup(path.get(), id.get());
                grants.nameCgroup(reserved.name(), reserved.fence(), reserved.holder(), cgroup);
                return Optional.of(cgroup);
            }
        } catch (IOException | RuntimeException e) {
            // not named, so not used: the subreaper (and the token) still tell the command's end
        }
        descendants.remove(path.get());
        return Optional.empty();
    }

    /**
     * Removes the empty cgroups of this store ({@code store}, its tag) below this process's own that
     * no granted record names, left by a starter killed before it could remove one: another store's,
     * under the same parent, are its own to judge (its records are not read here).
     */
    private void sweep(String store, String madeNow) {
        for (String stray : descendants.emptyCgroups(store, madeNow, STRAY_AGE)) {
            Optional<String> lease = LeaseNames.ofCgroup(stray, store);
            if (lease.isEmpty() || stray.equals(madeNow)) {
                continue;
            }
            try {
                Optional<LeaseRecord> r = book.read(lease.get());
                if (r.flatMap(LeaseRecord::cgroup).map(c -> c.equals(stray)).orElse(false) && r.get().granted()) {
                    continue; // named by a grant that lives: its judges remove it
                }
            } catch (IOException | RuntimeException e) {
                continue; // cannot tell: leave it
            }
            descendants.remove(stray);
        }
    }

    /** Renews lease {@code name} at {@code fence}, whoever holds it. */
    public LeaseRecord renew(String name, long fence) throws IOException {
        return grants.renew(name, fence, Optional.empty());
    }

    /** Releases lease {@code name} at {@code fence}, whoever holds it. */
    public boolean release(String name, long fence) throws IOException {
        Optional<LeaseRecord> before = book.read(name);
        boolean released = grants.end(name, fence, Grants.End.as(LeaseChange.RELEASED, Optional.empty()));
        if (released && before.isPresent() && before.get().fence() == fence) {
            renewals.release(name, fence, before.get().holder()); // released here: not lost
        }
        watches.unwatch(name, fence);
        return released;
    }

    public Optional<LeaseRecord> breakLease(String name) throws IOException {
        try {
            if (read(name).isEmpty() && book.highestFence(name).isEmpty()) {
                return Optional.empty(); // never taken (or gone): nothing to break, and nothing is made for it
            }
        } catch (LeaseCorruptException corrupt) {
            // what break is for: cleared below, under the lock
        }
        return grants.breakLease(name);
    }

    public void keepHolders(Duration poll, Consumer<String> says) throws InterruptedException {
        new HolderKeeper(grants, checker, book).run(poll, says);
    }

    /** Stops the watches and closes the book: what an etcd store kept expires after its TTL. */
    @Override
    public void close() {
        renewals.close();
        events.close();
        watches.close();
        book.close();
    }

    public Optional<LeaseRecord> read(String name) throws IOException {
        return grants.read(name);
    }

    public Optional<Identity> carrierOf(String token) {
        return carriers.outermost(writer, token);
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

    /**
     * Waits at most {@code most}, or until {@code wake} completes, in slices of at most
     * {@link #NAP_SLICE}, between which the whole wait's {@code deadline} is counted too: a clock
     * seen going back (libfaketime steps the monotonic clock with the wall clock) costs a deadline
     * at most one slice of what passed, so a wall clock stepped back again and again never keeps a
     * wait from ending.
     */
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
        return grants.now();
    }

    private Acquisition request(String name, LeaseRules.Request request) throws IOException {
        Optional<Duration> bound = lockBound();
        LeaseBook.Locked<Acquisition> work = guard -> grants.decide(parts, queue, name, request, guard);
        return bound.isPresent() ? book.locked(name, bound.get(), work) : book.locked(name, work);
    }
}
