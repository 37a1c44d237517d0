package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseListener;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Cgroup;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.lease.book.Records;
import dev.proclive.lease.book.Rounds;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.spi.internal.KernelIntrospector;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Consumer;

/** The one writer of leases' lives; each write first proves its record not rolled back ({@link #trusted}). */
public final class LeaseEngine implements LeaseLife, AutoCloseable {

    /** Younger, an empty unnamed cgroup may be one another starter has made and not named yet. */
    private static final Duration STRAY_AGE = Duration.ofSeconds(30);
    private static final java.security.SecureRandom TOKENS = new java.security.SecureRandom();

    private final LeaseBook book;
    private final LeasePolicy policy;
    private final Identity writer;
    private final LivenessChecker checker;
    private final ProcessIntrospector introspector;
    private final Clock clock;
    private final TokenCarriers carriers;
    private final Descendants descendants;
    private final KeptGrants keptGrants;
    /** Whether {@link #close} began: a keeper of holders ({@link #keepHolders}) returns. */
    private volatile boolean closed;
    private final RecordWatches events;
    private final WaiterQueue queue;
    private final Waiting waits;
    private final Map<String, Boolean> spawnedTokens = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > SPAWNS_KEPT;
                }
            });
    private static final int SPAWNS_KEPT = 4096;
    private final Set<Untold> untoldGrants = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Rounds settling = new Rounds("proclive-lease-untold", this::settleUntold,
            () -> untoldGrants.isEmpty() ? OptionalLong.empty() : OptionalLong.of(System.nanoTime() + SETTLE_NANOS));
    private static final long SETTLE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

    /** {@code writer}: this process; {@code clock} dates records, {@code pause} bounds waits. */
    public LeaseEngine(LeaseBook book, LeasePolicy policy, Identity writer, LivenessChecker checker, Clock clock,
                       Pause pause, Descendants descendants) {
        this.book = book;
        this.policy = policy;
        this.writer = writer;
        this.checker = checker;
        this.introspector = checker.introspector();
        this.clock = clock;
        this.descendants = descendants;
        this.carriers = new TokenCarriers(checker, descendants);
        this.keptGrants = new KeptGrants(this, book, checker, writer);
        this.queue = new WaiterQueue(book, checker, writer);
        this.waits = new Waiting(book, checker, pause, queue, this::now);
        this.events = new RecordWatches(this, book, checker);
    }

    @Override
    public LeaseBook book() {
        return book;
    }

    @Override
    public boolean closed() {
        return closed;
    }

    public AutoCloseable watch(String name, LeaseListener listener) throws IOException {
        return events.watch(name, listener);
    }

    public LeasePolicy policy() {
        return policy;
    }

    public Acquisition acquire(String name, Identity holder) throws IOException {
        return ask(name, LeaseJson.bounded(name, "holder", holder), LeaseRules.Request.acquire(holder));
    }

    public Acquisition reserve(String name, Identity reserver) throws IOException {
        return ask(name, LeaseJson.bounded(name, "reserver", reserver), LeaseRules.Request.reserve(reserver));
    }

    public Acquisition claim(String name, String token, Identity holder) throws IOException {
        LeaseJson.bounded(name, "holder", holder);
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

    /**
     * Asks again, in order, while held or undecided within {@code wait} ({@link Waiting}).
     * @throws InterruptedIOException if the thread is interrupted while waiting
     */
    public Acquisition waiting(String name, Identity who, Duration wait, Ask ask) throws IOException {
        return waits.waiting(name, LeaseJson.bounded(name, "waiter", who), wait, ask);
    }

    public Acquisition spawn(String name, ProcessBuilder command, Duration wait) throws IOException {
        boolean subreaper = policy.trackDescendants() && descendants.becomeSubreaper();
        Acquisition a = waiting(name, writer, wait, () -> ask(name, writer, LeaseRules.Request.reserve(writer)));
        if (!(a instanceof Acquisition.Granted granted)) {
            return a;
        }
        GrantedLease reserved = (GrantedLease) granted.lease();
        reserved.token().ifPresent(token -> spawnedTokens.put(Records.digest(token), true));
        Optional<Cgroup> cgroup = policy.trackDescendants() ? cgroupFor(reserved) : Optional.empty();
        Tracking tracking = new Tracking(descendants, subreaper, cgroup,
                KernelIntrospector.of(checker.introspector()).startFloor());
        return new Spawner(this, checker, reserved, tracking).start(command, book.environment());
    }

    /** Made only once the lease is granted; empty where none can be made or named (then the command runs without). */
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
                nameCgroup(reserved.name(), reserved.fence(), reserved.holder(), cgroup);
                return Optional.of(cgroup);
            }
        } catch (IOException | RuntimeException e) {
            // not named, so not used: the subreaper (and the token) still tell the command's end
        }
        descendants.remove(path.get());
        return Optional.empty();
    }

    /** Strays of starters killed early; another store's are its own to judge (its records are not read here). */
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

    /** Releases lease {@code name} at {@code fence}, whoever holds it. */
    public boolean release(String name, long fence) throws IOException {
        Optional<LeaseRecord> before = book.read(name);
        boolean released = end(name, fence, End.as(LeaseChange.RELEASED, Optional.empty()));
        if (released && before.isPresent() && before.get().fence() == fence) {
            keptGrants.release(name, fence, before.get().holder()); // released here: not lost
        }
        keptGrants.unfollow(name, fence);
        return released;
    }

    /** The operator's override: ends the grant as broken and empties its queue (waiters keep asking, unordered). */
    public Optional<LeaseRecord> breakLease(String name) throws IOException {
        try {
            // never taken or gone: nothing to break or make, but an etcd record gone with its lease may leave a queue
            if (!book.expires() && read(name).isEmpty() && book.highestFence(name).isEmpty()) {
                return Optional.empty();
            }
        } catch (LeaseCorruptException corrupt) {
            // what break is for: cleared below, under the lock
        }
        return book.locked(name, guard -> {
            guard.repair(); // a guard that is no fence is rewritten from what the record proves
            WaiterQueue.clear(guard);
            Optional<LeaseRecord> current;
            try {
                current = guard.record();
            } catch (LeaseCorruptException corrupt) {
                guard.remove(); // what the rules call corrupt until break: break clears it, the fence kept
                return Optional.empty();
            }
            if (current.isEmpty()) {
                return Optional.empty();
            }
            LeaseRecord r = current.get();
            LeaseRecord broken = r.granted()
                    ? Records.ended(r, writer, new LeaseRecord.Ending(LeaseChange.BROKEN, notBefore(r.acquiredAt()),
                            checker.explain(r.holder()), OptionalLong.empty()))
                    : Records.released(r, writer);
            guard.replace(broken); // a guard found below the record's fence is raised to it
            return Optional.of(broken);
        });
    }

    public void keepHolders(Duration poll, Consumer<String> says) throws InterruptedException {
        new HolderKeeper(this, keptGrants, checker).run(poll, says);
    }

    /** What an etcd store kept expires after its TTL. */
    @Override
    public void close() {
        closed = true;
        settling.close(Duration.ofSeconds(5));
        queue.close(); // while the book still takes locks
        keptGrants.close();
        events.close();
        book.close();
    }

    public Optional<Identity> carrierOf(String token) {
        return carriers.outermost(writer, token);
    }

    /** @throws IllegalStateException once the store is closed: nothing would keep what it grants, or tell its loss */
    private Acquisition request(String name, LeaseRules.Request request) throws IOException {
        refuseIfClosed(name);
        Optional<Duration> bound = waits.lockBound();
        LeaseBook.Locked<Acquisition> work = guard -> decide(name, request, guard);
        return bound.isPresent() ? book.locked(name, bound.get(), work) : book.locked(name, work);
    }

    private void refuseIfClosed(String name) {
        if (closed) {
            throw new IllegalStateException("the lease store is closed: lease " + name + " is not granted through it");
        }
    }

    Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    /** Never before {@code earliest}: after a clock step back, an ending before its grant is a corrupt record. */
    private Instant notBefore(Instant earliest) {
        Instant now = now();
        return now.isBefore(earliest) ? earliest : now;
    }

    @Override
    public Optional<LeaseRecord> read(String name) throws IOException {
        OptionalLong highest = book.highestFence(name);
        Optional<LeaseRecord> r = book.read(name);
        if (r.isPresent() && r.get().granted() && highest.isPresent()) {
            trusted(name, r.get(), highest.getAsLong());
        }
        return r;
    }

    /** {@code r} handed to {@code found}, a carrier of its token, fence kept; empty when it has ended since. */
    private Optional<LeaseRecord> adopt(LeaseBook.Guard guard, LeaseRecord r, ProcessInfo found, Instant now,
                                        String how) throws IOException {
        Optional<Identity> carrier = identified(found);
        if (carrier.isEmpty()) {
            return Optional.empty();
        }
        LeaseRecord adopted = Records.adoptedBy(r, carrier.get(), how, writer, now);
        guard.replace(adopted);
        return Optional.of(adopted);
    }

    /** Each fact is read only once {@link LeaseRules} ask for it; the decision becomes the answer here alone. */
    private Acquisition decide(String name, LeaseRules.Request request, LeaseBook.Guard guard) throws IOException {
        refuseIfClosed(name); // closed while it waited for the lock
        Optional<LeaseRecord> current = guard.record();
        if (current.isPresent() && current.get().granted()) {
            trusted(name, current.get(), guard.fence());
        }
        Instant now = now();
        Optional<Verdict> verdict = Optional.empty();
        Optional<TokenCarriers.Carried> scanned = Optional.empty();
        Optional<Instant> fresh = Optional.empty();
        LeaseRules.Decision d;
        do {
            d = LeaseRules.decide(request, current, verdict, scanned.map(TokenCarriers.Carried::scan), fresh, policy,
                    now);
            if (d == LeaseRules.Need.VERDICT) {
                verdict = Optional.of(checker.explain(current.orElseThrow().holder()));
            } else if (d == LeaseRules.Need.SCAN) {
                guard.confirm(); // a scan is costly: never over a record that may be stale
                scanned = Optional.of(carriers.scan(name, current.orElseThrow()));
            } else if (d == LeaseRules.Need.FRESHNESS) {
                fresh = Optional.of(guard.freshUntil(current.orElseThrow()));
            }
        } while (d instanceof LeaseRules.Need);
        if (d instanceof LeaseRules.Grant) { // a claim too: on a free lease it is a newcomer, its token no reservation
            Optional<LeaseBook.Waiter> first = queue.ahead(name, guard, request.who(), current, now);
            if (first.isPresent()) {
                // Free, but served in order: a waiter that came first is granted first.
                if (current.isEmpty()) {
                    return expired(name, guard.fence(), first.get(), now);
                }
                return new Acquisition.Held(current.get(), WaiterQueue.turnOf(first.get(),
                        verdict.orElseGet(() -> checker.explain(current.get().holder()))));
            }
        }
        if (d instanceof LeaseRules.Grant grant) {
            boolean reserve = request.kind() == LeaseRules.Kind.RESERVE;
            Optional<String> token = reserve ? Optional.of(newToken()) : Optional.empty();
            KernelIntrospector os = KernelIntrospector.of(introspector);
            Instant at = grant.previous().map(LeaseRecord.Takeover::at).orElse(now); // never before what it took over
            LeaseRecord granted = grant(guard, current, Records.granted(name,
                    reserve ? LeaseRecord.State.RESERVED : LeaseRecord.State.HELD, request.who(), writer, at,
                    policy.ttl(), grant.previous(), token.map(Records::digest),
                    reserve ? os.userId(request.who().pid()) : OptionalLong.empty(),
                    reserve ? os.startFloor() : Optional.empty()));
            current.flatMap(Cgroup::of).ifPresent(this::removeIfEmpty); // its grant ended: nothing enters it again
            return new Acquisition.Granted(GrantedLease.kept(this, keptGrants, granted, token), current, false);
        }
        LeaseRecord r = current.orElseThrow();
        if (d instanceof LeaseRules.Again) {
            LeaseRecord again = Records.handedTo(r, r.state(), request.who(), writer, now, policy.ttl());
            guard.replace(again);
            return new Acquisition.Granted(GrantedLease.kept(this, keptGrants, again, Optional.empty()), current, true);
        }
        if (d instanceof LeaseRules.Claim) {
            LeaseRecord claimed = Records.handedTo(r, LeaseRecord.State.HELD, request.who(), writer, now, r.ttl());
            guard.replace(claimed);
            return new Acquisition.Granted(GrantedLease.kept(this, keptGrants, claimed, request.token()), current, false);
        }
        if (d instanceof LeaseRules.Adopt adopt) {
            Optional<LeaseRecord> adopted = adopt(guard, r, adopt.carrier(), now,
                    scanned.map(TokenCarriers.Carried::how).orElse("token"));
            if (adopted.isEmpty()) { // it ended as it was found: ask again
                return new Acquisition.Undecided(r, checker.explain(r.holder()), Optional.empty());
            }
            return new Acquisition.Held(adopted.get(), checker.explain(adopted.get().holder()));
        }
        if (d instanceof LeaseRules.Held held) {
            return new Acquisition.Held(r, held.verdict());
        }
        LeaseRules.Undecided undecided = (LeaseRules.Undecided) d;
        // UNKNOWN (another machine's holder): a record that expires by itself (etcd) is free when it does
        Optional<Instant> eligible = undecided.eligibleAt().isEmpty() && undecided.verdict().liveness() == Liveness.UNKNOWN
                ? guard.expiresAt() : undecided.eligibleAt();
        Verdict v = undecided.verdict();
        String why = scanned.filter(c -> !c.scan().complete())
                .map(c -> "its holder is " + v.liveness().json() + " (" + v.detail() + "), and whether a process still"
                        + " carries its token cannot be proven: " + c.scan().detail())
                .orElse(v.detail());
        return new Acquisition.Undecided(r, v, eligible, why);
    }

    /** Refused for the queue with no record (etcd: expired): shown released at the highest fence, never written. */
    private Acquisition.Held expired(String name, long fence, LeaseBook.Waiter first, Instant now) {
        LeaseRecord turn = Records.released(Records.fenced(Records.granted(name, LeaseRecord.State.HELD, first.who(),
                writer, now, policy.ttl(), Optional.empty(), Optional.empty(), OptionalLong.empty(), Optional.empty()),
                fence), writer);
        Verdict waiter = checker.explain(first.who());
        return new Acquisition.Held(turn, WaiterQueue.turnOf(first, new Verdict(waiter.reason(),
                LeaseNames.NO_RECORD + (book.expires() ? " (it expired with its etcd lease)" : "") + "; pid "
                        + first.who().pid() + ", whose turn it is, is " + waiter.liveness().json() + " ("
                        + waiter.detail() + ")", waiter.exit())));
    }

    /**
     * A grant whose write failed with its record in place (fence not forced, EIO; etcd: answer lost) is told to nobody,
     * so it is released, lest a holder nobody told hold everyone out; its fence stays used. Only the very record
     * written here: on etcd, where nothing is locked, another caller may have been granted it again since.
     */
    private LeaseRecord grant(LeaseBook.Guard guard, Optional<LeaseRecord> before, LeaseRecord draft) throws IOException {
        try {
            return guard.grant(draft);
        } catch (IOException | RuntimeException e) {
            boolean interrupted = Thread.interrupted(); // the end is written all the same
            Untold untold = new Untold(before.map(LeaseRecord::fence).orElse(0L), draft);
            try {
                endIfUntold(guard, untold);
            } catch (IOException | RuntimeException again) {
                e.addSuppressed(again);
                untold(untold); // the record could not be read back (etcd unreachable): tried again until it is
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            throw e;
        }
    }

    /** A grant whose write failed, made above fence {@code after}: its record is ended if it is what the write made. */
    private record Untold(long after, LeaseRecord draft) {
    }

    private void endIfUntold(LeaseBook.Guard guard, Untold untold) throws IOException {
        Optional<LeaseRecord> r = guard.record();
        if (r.isPresent() && r.get().granted() && r.get().fence() > untold.after()
                && guard.stillAsGranted(Records.fenced(untold.draft(), r.get().fence()))) {
            guard.replace(Records.ended(r.get(), writer, new LeaseRecord.Ending(LeaseChange.RELEASED,
                    notBefore(r.get().acquiredAt()), checker.explain(r.get().holder()), OptionalLong.empty())));
        }
    }

    private void untold(Untold untold) {
        if (!closed) {
            untoldGrants.add(untold);
            settling.in(0);
        }
    }

    private void settleUntold() {
        for (Untold untold : List.copyOf(untoldGrants)) {
            try {
                book.locked(untold.draft().name(), guard -> {
                    endIfUntold(guard, untold);
                    return null;
                });
                untoldGrants.remove(untold);
            } catch (LeaseCorruptException | RuntimeException e) {
                untoldGrants.remove(untold); // a record that cannot be trusted, or a closed store: nothing to end
            } catch (IOException e) {
                // not yet: again at the next round
            }
        }
    }

    private void removeIfEmpty(Cgroup cgroup) {
        if (descendants.members(cgroup.path(), cgroup.id()).map(List::isEmpty).orElse(false)) {
            descendants.remove(cgroup.path());
        }
    }

    /**
     * Before anything enters it: from then on every reader judges by it, whoever finds it empty removes it.
     * @throws LeaseLostException if the reservation is no longer that
     */
    void nameCgroup(String name, long fence, Identity reserver, Cgroup cgroup) throws IOException {
        book.locked(name, guard -> {
            LeaseRecord named = Records.inCgroup(still(name, guard, fence, Optional.of(reserver)), cgroup);
            guard.replace(named);
            return named;
        });
    }

    private static String newToken() {
        byte[] bits = new byte[16];
        TOKENS.nextBytes(bits);
        return java.util.HexFormat.of().formatHex(bits);
    }

    /**
     * A fence below {@code highest} is a restored old copy (the guard only grows): renewing it reuses a fence. Unless
     * its holder is of an earlier boot (a power loss: guard forced, directory not): DEAD, so a new grant is safe.
     */
    LeaseRecord trusted(String name, LeaseRecord granted, long highest) throws LeaseCorruptException {
        Optional<String> boot = introspector.bootId();
        boolean earlierBoot = boot.isPresent() && !granted.holder().boot().isEmpty()
                && !granted.holder().boot().equals(boot.get()) && introspector.isBootId(granted.holder().boot());
        if (granted.fence() < highest && !earlierBoot) {
            throw new LeaseCorruptException(name, "the record is " + granted.state().json() + " at fence " + granted.fence()
                    + " but fence " + highest + " was granted since: it was rolled back; break the lease to go on");
        }
        return granted;
    }

    /** The trusted record of a grant that must still be {@code fence}'s and {@code holder}'s, or why it is lost. */
    private LeaseRecord still(String name, LeaseBook.Guard guard, long fence, Optional<Identity> holder)
            throws IOException {
        Optional<LeaseRecord> current = guard.record();
        if (current.isPresent() && current.get().granted() && current.get().fence() == fence
                && holder.map(h -> Records.sameProcess(current.get().holder(), h)).orElse(true)) {
            return trusted(name, current.get(), guard.fence());
        }
        throw new LeaseLostException(name, Losses.of(fence, holder, current, book.expires())
                .orElseGet(() -> new LeaseLost(LeaseChange.TAKEN_OVER, current,
                        "fence " + fence + " is reserved for pid " + current.get().holder().pid())));
    }

    @Override
    public LeaseRecord renew(String name, long fence, Optional<Identity> holder) throws IOException {
        if (book.lost(name, fence)) {
            throw new LeaseLostException(name, Losses.unconfirmed(fence, holder));
        }
        LeaseRecord renewed = book.locked(name, guard -> {
            LeaseRecord r = still(name, guard, fence, holder);
            LeaseRecord again = Records.renewed(r, writer, now(), policy.renewalTtl().orElse(r.ttl()));
            guard.replace(again);
            return again;
        });
        keptGrants.written(renewed);
        return renewed;
    }

    @Override
    public boolean end(String name, long fence, End end) throws IOException {
        Tracking tracking = end.tracking();
        Optional<List<Long>> kernel = end.how() == LeaseChange.EXITED && tracking.tracks()
                ? tracking.leftBehind() : Optional.empty();
        boolean[] notThere = {false};
        boolean ended = book.locked(name, guard -> {
            Optional<LeaseRecord> current = guard.record();
            if (current.isEmpty() || current.get().fence() != fence) {
                notThere[0] = true;
                return false;
            }
            LeaseRecord r = current.get();
            if (!r.granted()) {
                return true;
            }
            if (end.holder().isPresent() && !Records.sameProcess(r.holder(), end.holder().get())) {
                return false;
            }
            trusted(name, r, guard.fence());
            if (kernel.isPresent() && !kernel.get().isEmpty()) {
                // the kernel's list of what the command left: the lease goes to one no later proof finds
                Instant at = notBefore(r.acquiredAt());
                for (ProcessInfo next : candidates(kernel.get(), r, tracking)) {
                    if (adopt(guard, r, next, at, tracking.how()).isPresent()) {
                        return false;
                    }
                }
                // they ended as they were read: the scan (or the cgroup, read again) decides below
            } else if (kernel.isPresent()) {
                tracking.removeIfEmpty(); // nothing of the command is left: nothing can enter it again
            }
            boolean kernelSaysNone = kernel.map(List::isEmpty).orElse(false);
            if (end.how() == LeaseChange.EXITED && r.tokenDigest().isPresent() && !kernelSaysNone
                    && !carriersGone(name, guard, r, end.child())) {
                return false; // the token lives on in a process the child started: the lease is still in use
            }
            Verdict then = end.verdict().orElseGet(() -> checker.explain(r.holder()));
            guard.replace(Records.ended(r, writer,
                    new LeaseRecord.Ending(end.how(), notBefore(r.acquiredAt()), then, end.exitCode())));
            return true;
        });
        if (ended || notThere[0]) {
            book.ended(name, fence); // a lost grant's etcd lease is held in use only until now
        }
        return ended;
    }

    /**
     * The live processes the command left (and their descendants), in the order the lease is offered, each group oldest
     * first: those neither cgroup nor token will show once the supervisor is gone (a daemon that left the cgroup and
     * cleared its environment), kept only by being the holder; those whose environment cannot be read here; those the
     * proofs show; last, carriers of another spawned command's token (its orphans are this subreaper's too). The proofs
     * find theirs again when the holder ends; of those neither shows, only the holder is kept.
     */
    private List<ProcessInfo> candidates(List<Long> left, LeaseRecord r, Tracking tracking) {
        Map<Long, List<Long>> children = new HashMap<>(); // one look at every process, not one per process left
        ProcessHandle.allProcesses().forEach(p -> p.parent().ifPresent(parent ->
                children.computeIfAbsent(parent.pid(), k -> new ArrayList<>()).add(p.pid())));
        Set<Long> pids = new LinkedHashSet<>(left);
        java.util.Deque<Long> next = new java.util.ArrayDeque<>(left);
        while (!next.isEmpty()) {
            for (long child : children.getOrDefault(next.pop(), List.of())) {
                if (pids.add(child)) {
                    next.push(child);
                }
            }
        }
        Set<Long> inside = tracking.cgroup().flatMap(c -> descendants.members(c.path(), c.id()))
                .<Set<Long>>map(HashSet::new).orElse(Set.of());
        List<List<ProcessInfo>> tiers = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        for (long pid : pids) {
            if (introspector.lookupProcess(pid) instanceof ProcessLookup.Found f && f.info().state() == ProcessState.LIVE) {
                Optional<Boolean> carries = inside.contains(pid) ? Optional.of(true) : carries(f.info(), r);
                tiers.get(carries.isEmpty() ? 1 : carries.get() ? 2 : carriesAnother(f.info(), r) ? 3 : 0).add(f.info());
            }
        }
        List<ProcessInfo> offered = new ArrayList<>();
        for (List<ProcessInfo> tier : tiers) {
            while (!tier.isEmpty()) {
                ProcessInfo first = LeaseRules.firstCarrier(tier).orElse(tier.get(0)); // parents read as a cycle: any
                offered.add(first);
                tier.remove(first);
            }
        }
        return offered;
    }

    /** Whether {@code p} carries the token of another command spawned here: its orphans are this subreaper's too. */
    private boolean carriesAnother(ProcessInfo p, LeaseRecord r) {
        String own = r.tokenDigest().orElse("");
        return identified(p)
                .flatMap(id -> carriers.carriesDigestOf(id, d -> !d.equals(own) && spawnedTokens.containsKey(d)))
                .orElse(false);
    }

    /** Whether {@code p}'s environment shows {@code r}'s token to a newcomer's scan; empty where it cannot be read. */
    private Optional<Boolean> carries(ProcessInfo p, LeaseRecord r) {
        if (r.tokenDigest().isEmpty()) {
            return Optional.of(false);
        }
        return identified(p).flatMap(id -> carriers.carriesDigest(id, r.tokenDigest().get()));
    }

    /** {@code p}'s identity, as long as its pid still names the process read (not one started since). */
    private Optional<Identity> identified(ProcessInfo p) {
        return checker.identify(p.pid()).filter(id -> id.start().equals(p.start()));
    }

    /**
     * Whether no process carries {@code r}'s token (a daemonised child leaves its writer behind; one found gets the
     * lease). While a re-forking chain outruns the scan, a reservation goes to the exited {@code child} (DEAD), judged
     * by its carriers, not held on by the live reserver. A scan partial for good (other users' processes) still ends
     * it: the child's descendants run as the reserver's user, whose environments are read.
     */
    private boolean carriersGone(String name, LeaseBook.Guard guard, LeaseRecord r, Optional<Identity> child)
            throws IOException {
        guard.confirm();
        TokenCarriers.Carried scan = carriers.scan(name, r);
        Optional<ProcessInfo> found = LeaseRules.firstCarrier(scan.scan().carriers());
        if (found.isPresent()) {
            adopt(guard, r, found.get(), notBefore(r.acquiredAt()), scan.how());
            return false;
        }
        if (scan.scan().complete() || !scan.scan().passAgain()) {
            return true;
        }
        if (child.isPresent() && r.state() == LeaseRecord.State.RESERVED) {
            guard.replace(Records.handedTo(r, LeaseRecord.State.HELD, child.get(), writer, now(), r.ttl()));
        }
        return false;
    }

    @Override
    public LeaseRecord handOff(String name, long fence, Identity from, Identity to) throws IOException {
        LeaseJson.bounded(name, "new holder", to);
        Verdict alive = checker.explain(to);
        if (alive.liveness() != Liveness.ALIVE) {
            throw new IllegalArgumentException("a lease is handed to a live process only; the new holder is " + alive);
        }
        return book.locked(name, guard -> {
            LeaseRecord r = still(name, guard, fence, Optional.of(from));
            Instant now = now();
            if (r.state() != LeaseRecord.State.RESERVED) {
                return grant(guard, Optional.of(r), Records.regranted(r, to, writer, now));
            }
            LeaseRecord held = Records.handedTo(r, LeaseRecord.State.HELD, to, writer, now, r.ttl());
            if (r.tokenDigest().isPresent() && !carriers.carriesDigest(to, r.tokenDigest().get()).orElse(true)) {
                // no token in its environment: nothing it starts carries one, so only its death ends it
                held = Records.withoutToken(held);
            }
            guard.replace(held);
            return held;
        });
    }
}
