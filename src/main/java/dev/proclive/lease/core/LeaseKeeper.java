package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.Spawn;
import dev.proclive.lease.book.ExpiringBook;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.spi.Descendants;
import dev.proclive.spi.ProcessIntrospector;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine: the store's work on one lease. Lock it, read it, decide ({@link LeaseRules}), write
 * what was decided, and answer as the API does ({@link Acquisition}): the decision is turned into
 * the answer once, here. It also waits (through its {@link Pause}), spawns ({@link Spawner}),
 * keeps other processes' grants ({@link HolderKeeper}), and ends a grant on an expiring book the
 * moment its holder dies (through the exit watch). It knows its book only through the seam
 * ({@link LeaseBook}); the facade builds both. Its state is its own.
 */
public final class LeaseKeeper implements AutoCloseable {

    /** While waiting for a holder's exit, how often a release without an exit is looked for. */
    private static final Duration RECHECK = Duration.ofSeconds(2);

    private final LeaseBook book;
    private final LeasePolicy policy;
    private final Identity writer;
    private final LivenessChecker checker;
    private final ProcessIntrospector introspector;
    private final Clock clock;
    private final Pause pause;
    private final TokenCarriers carriers;
    private final Grants grants;
    /** What the kernel tracks of a spawned command's descendants, where the policy asks for it. */
    private final Descendants descendants;
    /** The exit watch on each holder whose grant on an expiring book this JVM wrote, by lease name. */
    private final Map<String, HolderWatch> holderWatches = new ConcurrentHashMap<>();
    /** The grants this store renews, on one daemon thread. */
    private final Renewals renewals;
    /** The waiters of each lease, served in the order they came. */
    private final WaiterQueue queue;

    /**
     * An engine over {@code book}, judging with {@code checker}, writing as {@code writer} (this
     * process), telling time by {@code clock}, waiting through {@code pause}, and tracking a spawned
     * command's descendants through {@code descendants} when the policy asks for it.
     */
    public LeaseKeeper(LeaseBook book, LeasePolicy policy, Identity writer, LivenessChecker checker, Clock clock,
                       Pause pause, Descendants descendants) {
        this.book = book;
        this.policy = policy;
        this.writer = writer;
        this.checker = checker;
        this.introspector = checker.introspector();
        this.clock = clock;
        this.pause = pause;
        this.descendants = descendants;
        this.carriers = new TokenCarriers(checker, introspector, descendants);
        this.grants = new Grants(book, policy, writer, checker, introspector, clock, carriers, descendants);
        this.renewals = new Renewals(grants);
        this.queue = new WaiterQueue(book, checker);
    }

    /** The policy acquisitions follow. */
    public LeasePolicy policy() {
        return policy;
    }

    /** The book the records are in. */
    public LeaseBook book() {
        return book;
    }

    /** Takes lease {@code name} for {@code holder}: {@code LeaseStore.acquire}. */
    public Acquisition acquire(String name, Identity holder) throws IOException {
        return ask(name, holder, LeaseRules.Request.acquire(holder));
    }

    /** Reserves lease {@code name} for a process {@code reserver} is about to start: {@code LeaseStore.reserve}. */
    public Acquisition reserve(String name, Identity reserver) throws IOException {
        return ask(name, reserver, LeaseRules.Request.reserve(reserver));
    }

    /** The reservation with {@code token} made {@code holder}'s: {@code LeaseStore.claim}. */
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
     * proven unused), waits and asks again, until {@code wait} has passed by the store's clock.
     * Waiting goes through the pause: the exit watch for a held lease's holder, a sleep until an
     * undecided one's {@code eligibleAt}.
     *
     * @throws InterruptedIOException if the thread is interrupted while waiting
     */
    public Acquisition waiting(String name, Identity who, Duration wait, Ask ask) throws IOException {
        Instant deadline = now().plus(wait.isNegative() ? Duration.ZERO : wait);
        Acquisition a = ask.get();
        boolean queued = false;
        try {
            if (!(a instanceof Acquisition.Granted) && deadline.isAfter(now()) && checker.explain(who).liveness() == Liveness.ALIVE) {
                queue.enqueue(name, who, deadline); // served in order from now on: nobody who asks later jumps ahead
                queued = true;
            }
            a = waitInQueue(deadline, a, ask);
            return a;
        } finally {
            if (queued && !(a instanceof Acquisition.Granted)) {
                queue.dequeue(name, who); // gave up (or was interrupted): the next in line is not held up
            }
        }
    }

    /** How often a waiter queued behind another looks again, at most. */
    private static final Duration QUEUED_RECHECK = Duration.ofMillis(200);

    private Acquisition waitInQueue(Instant deadline, Acquisition first, Ask ask) throws IOException {
        Acquisition a = first;
        Duration recheck = Duration.ofMillis(25);
        while (true) {
            Duration left = Duration.between(now(), deadline);
            if (left.isNegative() || left.isZero()) {
                return a;
            }
            Duration nap = left.compareTo(RECHECK) < 0 ? left : RECHECK;
            try {
                if (a instanceof Acquisition.Held held && (!held.record().granted()
                        || checker.explain(held.record().holder()).liveness() != Liveness.ALIVE)) {
                    // Free, but another waiter is ahead in the queue: look again soon, as it takes its turn.
                    sleep(held.record().name(), recheck.compareTo(nap) < 0 ? recheck : nap);
                    recheck = recheck.multipliedBy(2).compareTo(QUEUED_RECHECK) > 0 ? QUEUED_RECHECK : recheck.multipliedBy(2);
                } else if (a instanceof Acquisition.Held held) {
                    awaitEnd(held.record().name(), held.record().holder(), nap);
                } else if (a instanceof Acquisition.Undecided u && u.eligibleAt().isPresent()) {
                    Duration until = Duration.between(now(), u.eligibleAt().get()).plusMillis(1);
                    if (until.compareTo(left) > 0) {
                        return a;
                    }
                    sleep(u.record().name(), until.compareTo(nap) < 0 ? until : nap);
                } else if (a instanceof Acquisition.Undecided u && u.verdict().liveness() == Liveness.DEAD) {
                    // Its holder is DEAD but a scan could not prove its token unused: its launcher
                    // may be ending the record this moment, or the processes that made the scan
                    // incomplete may end. Look again, soon at first.
                    sleep(u.record().name(), recheck.compareTo(nap) < 0 ? recheck : nap);
                    recheck = recheck.multipliedBy(2);
                } else {
                    return a;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for lease " + a);
            }
            a = ask.get();
        }
    }

    /** Reserves lease {@code name}, waiting up to {@code wait}, and starts {@code command} under it: {@code LeaseStore.spawn}. */
    public Spawn spawn(String name, ProcessBuilder command, Duration wait) throws IOException {
        boolean subreaper = policy.trackDescendants() && descendants.becomeSubreaper();
        Acquisition a = waiting(name, writer, wait, () -> ask(name, writer, LeaseRules.Request.reserve(writer)));
        if (!(a instanceof Acquisition.Granted granted)) {
            return new Spawn.Refused(a);
        }
        GrantedLease reserved = (GrantedLease) granted.lease();
        Optional<LeaseRecord.Cgroup> cgroup = policy.trackDescendants() ? cgroupFor(reserved) : Optional.empty();
        return Spawner.start(this, name, reserved, command,
                new Tracking(descendants, subreaper, cgroup, introspector.startFloor()));
    }

    /** How old an empty, unnamed cgroup of this library must be before a sweep removes it. */
    private static final Duration STRAY_AGE = Duration.ofSeconds(30);

    /**
     * A new cgroup for the command of {@code reserved}, made only now that the lease is granted and
     * named in its record before anything enters it; empty where none can be made or named (the
     * command then runs without one). Empty cgroups of this library under the same parent that no
     * record names (left by a starter killed before it could remove one) are swept first.
     */
    private Optional<LeaseRecord.Cgroup> cgroupFor(GrantedLease reserved) {
        sweep();
        Optional<String> path = descendants.newCgroup(reserved.name());
        if (path.isEmpty()) {
            return Optional.empty();
        }
        Optional<String> id = descendants.cgroupId(path.get());
        try {
            if (id.isPresent()) {
                LeaseRecord.Cgroup cgroup = new LeaseRecord.Cgroup(path.get(), id.get());
                grants.nameCgroup(reserved.name(), reserved.fence(), reserved.holder(), cgroup);
                return Optional.of(cgroup);
            }
        } catch (IOException | RuntimeException e) {
            // not named, so not used: the subreaper (and the token) still tell the command's end
        }
        descendants.remove(path.get());
        return Optional.empty();
    }

    /** Removes the empty cgroups of this library below this process's own that no record of this store names. */
    private void sweep() {
        for (String stray : descendants.emptyCgroups(STRAY_AGE)) {
            Optional<String> lease = LeaseNames.ofCgroup(stray);
            try {
                Optional<LeaseRecord> r = lease.isPresent() ? book.read(lease.get()) : Optional.empty();
                if (r.flatMap(LeaseRecord::cgroup).map(c -> c.path().equals(stray)).orElse(false) && r.get().granted()) {
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
        stopRenewing(name, fence);
        boolean released = grants.end(name, fence, Optional.empty(), LeaseRecord.Ending.How.RELEASED, OptionalLong.empty());
        unwatch(name, fence);
        return released;
    }

    /** The operator's override: {@code LeaseStore.breakLease}. */
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

    /** Keeps the grants of this machine's holders in {@code book}, until interrupted: {@code LeaseStore.keepHolders}. */
    public void keepHolders(ExpiringBook expiring, Duration poll, java.util.function.Consumer<String> says)
            throws InterruptedException {
        new HolderKeeper(this, expiring).run(poll, says);
    }

    /**
     * On an expiring book, a grant this JVM wrote whose holder is not a spawned child (that one's
     * launcher ends it, with the status) is ended the moment its holder dies, through the exit
     * watch, so that nobody anywhere waits out its TTL. One watch per lease: a newer grant's
     * replaces an older one's.
     */
    void watchHolder(LeaseRecord granted) {
        if (!(book instanceof ExpiringBook) || !granted.granted() || granted.tokenDigest().isPresent()
                || LeaseRules.sameProcess(granted.holder(), writer)) {
            return; // a grant of this JVM's own ends with it: nobody here could end it then
        }
        HolderWatch watch = new HolderWatch(granted.fence(), checker.onExit(granted.holder()));
        HolderWatch before = holderWatches.put(granted.name(), watch);
        if (before != null && before != watch) {
            before.end().cancel(false);
        }
        watch.end().thenAccept(verdict -> {
            holderWatches.remove(granted.name(), watch);
            if (verdict.liveness() != Liveness.DEAD) {
                return; // cannot be watched from here: the record expires by itself unless renewed
            }
            try {
                // How it ended, where the kernel told the watch: the record keeps it ("its holder was killed by SIGKILL").
                OptionalLong code = verdict.exit().filter(x -> x.code().isPresent())
                        .map(x -> OptionalLong.of(x.code().getAsInt())).orElse(OptionalLong.empty());
                Verdict said = verdict.exit().map(x -> new Verdict(verdict.reason(), verdict.detail() + "; its holder "
                        + x, verdict.exit())).orElse(verdict);
                grants.end(granted.name(), granted.fence(), Optional.of(granted.holder()), LeaseRecord.Ending.How.EXITED,
                        code, Optional.of(said));
            } catch (IOException | RuntimeException e) {
                // not kept any more: it expires by itself
            }
        });
    }

    /** The grant at {@code fence} of lease {@code name} ended here: its holder's watch is no longer needed. */
    void unwatch(String name, long fence) {
        HolderWatch w = holderWatches.get(name);
        if (w != null && w.fence() == fence && holderWatches.remove(name, w)) {
            w.end().cancel(false);
        }
    }

    /** The exit watch on the holder of the grant at {@code fence}. */
    private record HolderWatch(long fence, CompletableFuture<Verdict> end) {
    }

    /**
     * Stops the watches this engine holds and closes the book: an etcd store's keep-alive thread and
     * client end, and what it kept expires after its TTL.
     */
    @Override
    public void close() {
        renewals.close();
        holderWatches.values().forEach(w -> w.end().cancel(false));
        holderWatches.clear();
        book.close();
    }

    /** Renews {@code granted} from now on ({@link Renewals#keep}). */
    void keepRenewed(LeaseRecord granted) {
        renewals.keep(granted);
    }

    /** The grant at {@code fence} of lease {@code name} is no longer this store's to renew. */
    void stopRenewing(String name, long fence) {
        renewals.stop(name, fence);
    }

    /** Where a spawned child finds this store: the book's variables. */
    Map<String, String> environment() {
        return book.environment();
    }

    /** The identity of this process, which writes every record. */
    Identity writer() {
        return writer;
    }

    /**
     * The record of {@code name}, without a lock, judged as a grant judges it: a granted record
     * below the highest fence the book keeps apart from it (a directory's guard) was rolled back.
     *
     * @throws LeaseCorruptException if it cannot be trusted, or the guard is no fence
     */
    public Optional<LeaseRecord> read(String name) throws IOException {
        java.util.OptionalLong highest = book.highestFence(name);
        Optional<LeaseRecord> r = book.read(name);
        if (r.isPresent() && r.get().granted() && highest.isPresent()) {
            grants.trusted(name, r.get(), highest.getAsLong());
        }
        return r;
    }

    Optional<Identity> identify(long pid) {
        return checker.identify(pid);
    }

    /** The outermost carrier of {@code token} from this process up ({@link TokenCarriers#outermost}). */
    public Optional<Identity> carrierOf(String token) {
        return carriers.outermost(writer, token);
    }

    /**
     * Waits at most {@code most} for {@code holder} to end, through the exit watch, or for lease
     * {@code name}'s record to change, where the book can tell.
     */
    void awaitEnd(String name, Identity holder, Duration most) throws InterruptedException {
        CompletableFuture<Verdict> end = checker.onExit(holder);
        Optional<CompletableFuture<Void>> changed = book.changed(name);
        try {
            pause.await(changed.isPresent() ? CompletableFuture.anyOf(end, changed.get()) : end, most);
        } finally {
            end.cancel(false);
            changed.ifPresent(c -> c.cancel(false));
        }
    }

    /** Waits {@code d}, or until lease {@code name}'s record changes, where the book can tell. */
    void sleep(String name, Duration d) throws InterruptedException {
        Optional<CompletableFuture<Void>> changed = book.changed(name);
        if (changed.isEmpty()) {
            pause.sleep(d);
            return;
        }
        try {
            pause.sleep(d, changed.get());
        } finally {
            changed.get().cancel(false);
        }
    }

    /** Whether this JVM already knows the grant at {@code fence} lost: the book says so, or a renewal here found it. */
    boolean lost(String name, long fence) {
        return renewals.foundLost(name, fence) || book.lost(name, fence);
    }

    /** The store's time, to the millisecond. */
    Instant now() {
        return grants.now();
    }

    /** Hands the grant at {@code fence} of {@code from} to {@code to} ({@link Grants#handOff}). */
    LeaseRecord handOff(String name, long fence, Identity from, Identity to) throws IOException {
        LeaseRecord handed = grants.handOff(name, fence, from, to);
        stopRenewing(name, fence);
        keepRenewed(handed);
        watchHolder(handed);
        return handed;
    }

    /** What happens to a grant once it is made: renewed, handed off, adopted, ended, broken. */
    Grants grants() {
        return grants;
    }

    /** Completes when {@code holder} is DEAD (the exit watch). */
    CompletableFuture<Verdict> onExit(Identity holder) {
        return checker.onExit(holder);
    }

    Verdict explain(Identity id) {
        return checker.explain(id);
    }

    /** Decides {@code request} for lease {@code name}, writes what was decided, and answers. */
    Acquisition request(String name, LeaseRules.Request request) throws IOException {
        return book.locked(name, guard -> {
            Optional<LeaseRecord> current = guard.record();
            if (current.isPresent() && current.get().granted()) {
                grants.trusted(name, current.get(), guard);
            }
            Instant now = now();
            Optional<Verdict> verdict = Optional.empty();
            Optional<TokenCarriers.Carried> scan = Optional.empty();
            while (true) {
                LeaseRules.Decision d = LeaseRules.decide(request, current, verdict, scan.map(TokenCarriers.Carried::scan),
                        policy, now);
                if (d instanceof LeaseRules.NeedVerdict) {
                    verdict = Optional.of(checker.explain(current.orElseThrow().holder()));
                } else if (d instanceof LeaseRules.NeedScan) {
                    guard.confirm(); // a scan is costly: never over a record that may be stale
                    scan = Optional.of(carriers.scan(name, current.orElseThrow()));
                } else {
                    if (d instanceof LeaseRules.Grant && request.kind() != LeaseRules.Kind.CLAIM) {
                        Optional<LeaseBook.Waiter> first = queue.ahead(guard, request.who(), now);
                        if (first.isPresent() && current.isPresent()) {
                            // Free, but served in order: a waiter that came first is granted first.
                            return new Acquisition.Held(current.get(), Verdict.of(dev.proclive.Reason.MATCHED,
                                    "the lease is free, and pid " + first.get().who().pid() + " has waited for it longer:"
                                    + " waiters are served in the order they came"));
                        }
                    }
                    Acquisition a = grants.decided(this, name, guard, request, current, d, scan, now);
                    if (a instanceof Acquisition.Granted granted) {
                        keepRenewed(granted.lease().record());
                    }
                    return a;
                }
            }
        });
    }


}
