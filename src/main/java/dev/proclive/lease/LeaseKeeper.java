package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.spi.EnvironmentScan;
import dev.proclive.spi.ProcessIntrospector;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The store's work on one lease: lock it, read it, decide ({@link LeaseRules}), write what was
 * decided, and answer as the API does ({@link Acquisition}): the decision is turned into the
 * answer once, here. Its state is its own: {@link LeaseStore} and {@link Lease} ask it through
 * methods.
 */
final class LeaseKeeper {

    /** The environment variable a spawned process finds its reservation's token in. */
    static final String TOKEN_VARIABLE = "PROCLIVE_LEASE_TOKEN";

    private static final SecureRandom TOKENS = new SecureRandom();

    private final LeaseBook book;
    private final LeasePolicy policy;
    private final Identity writer;
    private final LivenessChecker checker;
    private final ProcessIntrospector introspector;
    private final Clock clock;
    private final Pause pause;
    private final TokenCarriers carriers;

    LeaseKeeper(LeaseBook book, LeasePolicy policy, Identity writer, LivenessChecker checker,
                ProcessIntrospector introspector, Clock clock, Pause pause) {
        this.book = book;
        this.policy = policy;
        this.writer = writer;
        this.checker = checker;
        this.introspector = introspector;
        this.clock = clock;
        this.pause = pause;
        this.carriers = new TokenCarriers(checker, introspector);
    }

    /**
     * How a wait waits: for a future (a holder's exit) or for a while, at most {@code most}. The
     * seam that lets wait rules be tested without sleeping, beside the store's {@link Clock}.
     */
    interface Pause {
        /** Waits until {@code end} completes or {@code most} has passed. */
        void await(CompletableFuture<?> end, Duration most) throws InterruptedException;

        /** Waits {@code d}. */
        void sleep(Duration d) throws InterruptedException;

        /** Waits {@code d}, or until {@code wake} completes (a record that changed). */
        default void sleep(Duration d, CompletableFuture<?> wake) throws InterruptedException {
            await(wake, d);
        }

        /** Real time: {@link CompletableFuture#get(long, TimeUnit)} and {@link Thread#sleep(long)}. */
        Pause REAL = new Pause() {
            @Override
            public void await(CompletableFuture<?> end, Duration most) throws InterruptedException {
                try {
                    end.get(Math.max(1, most.toMillis()), TimeUnit.MILLISECONDS);
                } catch (TimeoutException | ExecutionException e) {
                    // the deadline, or a watch that failed: judge again either way
                }
            }

            @Override
            public void sleep(Duration d) throws InterruptedException {
                Thread.sleep(Math.max(1, d.toMillis()));
            }
        };
    }

    /** The directory of a store over files. */
    Path directory() {
        if (book instanceof LeaseFiles files) {
            return files.directory();
        }
        throw new IllegalStateException("a lease store on etcd has no directory");
    }

    LeasePolicy policy() {
        return policy;
    }

    LeaseBook book() {
        return book;
    }

    /** Where a spawned child finds this store: the book's variables. */
    java.util.Map<String, String> environment() {
        return book.environment();
    }

    /** The identity of this process, which writes every record. */
    Identity writer() {
        return writer;
    }

    /** The record of {@code name}, without a lock. */
    Optional<LeaseRecord> read(String name) throws IOException {
        return book.read(name);
    }

    Optional<Identity> identify(long pid) {
        return checker.identify(pid);
    }

    /** Whether {@code holder} carries {@code token} ({@link TokenCarriers#carries}). */
    Optional<Boolean> carries(Identity holder, String token) {
        return carriers.carries(holder, token);
    }

    /** The outermost carrier of {@code token} from this process up ({@link TokenCarriers#outermost}). */
    Optional<Identity> outermostCarrier(String token) {
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

    /** Whether the book already knows the grant at {@code fence} lost. */
    boolean lost(String name, long fence) {
        return book.lost(name, fence);
    }

    Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    /**
     * Now, or {@code earliest} if the clock reads earlier (it was stepped back): evidence this store
     * writes never contradicts itself (an ending before its grant is a corrupt record).
     */
    Instant notBefore(Instant earliest) {
        Instant now = now();
        return now.isBefore(earliest) ? earliest : now;
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
                trusted(name, current.get(), guard);
            }
            Instant now = now();
            Optional<Verdict> verdict = Optional.empty();
            Optional<EnvironmentScan> scan = Optional.empty();
            while (true) {
                LeaseRules.Decision d = LeaseRules.decide(request, current, verdict, scan, policy, now);
                if (d instanceof LeaseRules.NeedVerdict) {
                    verdict = Optional.of(checker.explain(current.orElseThrow().holder()));
                } else if (d instanceof LeaseRules.NeedScan) {
                    guard.confirm(); // a scan is costly: never over a record that may be stale
                    scan = Optional.of(carriers.scan(name, current.orElseThrow()));
                } else {
                    return apply(name, guard, request, current, d, now);
                }
            }
        });
    }

    private Acquisition apply(String name, LeaseBook.Guard guard, LeaseRules.Request request, Optional<LeaseRecord> current,
                         LeaseRules.Decision d, Instant now) throws IOException {
        if (d instanceof LeaseRules.Grant grant) {
            boolean reserve = request.kind() == LeaseRules.Kind.RESERVE;
            Optional<String> token = reserve ? Optional.of(newToken()) : Optional.empty();
            LeaseRecord granted = guard.grant(new LeaseRecord(name, 0,
                    reserve ? LeaseRecord.State.RESERVED : LeaseRecord.State.HELD, request.who(), writer, now, now,
                    policy.ttl(), grant.previous(), token.map(LeaseRecord::digest),
                    reserve ? introspector.userId(request.who().pid()) : java.util.OptionalLong.empty(),
                    Optional.empty(), reserve ? introspector.startFloor() : Optional.empty(), Optional.empty()));
            return new Acquisition.Granted(new Lease(this, granted, token), current, false);
        }
        LeaseRecord r = current.orElseThrow();
        if (d instanceof LeaseRules.Again) {
            LeaseRecord again = r.with(r.state(), request.who(), writer, Optional.empty()).renewed(writer, now, policy.ttl());
            guard.replace(again);
            return new Acquisition.Granted(new Lease(this, again, Optional.empty()), current, true);
        }
        if (d instanceof LeaseRules.Claim) {
            LeaseRecord claimed = r.with(LeaseRecord.State.HELD, request.who(), writer, Optional.empty())
                    .renewed(writer, now, r.ttl());
            guard.replace(claimed);
            return new Acquisition.Granted(new Lease(this, claimed, request.token()), current, false);
        }
        if (d instanceof LeaseRules.Adopt adopt) {
            Optional<LeaseRecord> adopted = adopt(name, guard, r, adopt.carrier(), now);
            if (adopted.isEmpty()) { // it ended as it was found: ask again
                return new Acquisition.Undecided(r, checker.explain(r.holder()), Optional.empty());
            }
            return new Acquisition.Held(adopted.get(), checker.explain(adopted.get().holder()));
        }
        if (d instanceof LeaseRules.Held held) {
            return new Acquisition.Held(r, held.verdict());
        }
        LeaseRules.Undecided undecided = (LeaseRules.Undecided) d;
        // A holder that cannot be judged here (another machine's) is nobody's to keep alive from here:
        // a record that goes away by itself (etcd) is free when it does.
        Optional<Instant> eligible = undecided.eligibleAt().isEmpty() && undecided.verdict().liveness() == Liveness.UNKNOWN
                ? guard.expiresAt() : undecided.eligibleAt();
        return new Acquisition.Undecided(r, undecided.verdict(), eligible);
    }

    /**
     * {@code r} made the holding of {@code found}, a carrier of its token, fence kept
     * ({@code adoptedBy: token}), and written; empty when that process has ended since the scan.
     */
    private Optional<LeaseRecord> adopt(String name, LeaseBook.Guard guard, LeaseRecord r, dev.proclive.spi.ProcessInfo found, Instant now)
            throws IOException {
        Optional<Identity> carrier = checker.identify(found.pid()).filter(id -> id.start().equals(found.start()));
        if (carrier.isEmpty()) {
            return Optional.empty();
        }
        LeaseRecord adopted = new LeaseRecord(name, r.fence(), LeaseRecord.State.HELD, carrier.get(), writer,
                r.acquiredAt(), now, r.ttl(), r.previous(), r.tokenDigest(), r.reserverUid(), Optional.of("token"),
                r.startedAfter(), Optional.empty());
        guard.replace(adopted);
        return Optional.of(adopted);
    }

    private static String newToken() {
        byte[] bits = new byte[16];
        TOKENS.nextBytes(bits);
        return HexFormat.of().formatHex(bits);
    }

    /**
     * A granted record, if its fence is not below the guard's: one that is was restored from an old
     * copy (the guard only grows), and renewing it would hand out a fence already given. Unless its
     * holder is of an earlier boot: that is what a power loss leaves (the guard is forced, the
     * directory need not be), and such a holder is DEAD, so the next grant, above the guard, is safe.
     */
    private LeaseRecord trusted(String name, LeaseRecord granted, LeaseBook.Guard guard) throws IOException {
        long highest = guard.fence();
        Optional<String> boot = introspector.bootId();
        boolean earlierBoot = boot.isPresent() && !granted.holder().boot().isEmpty()
                && !granted.holder().boot().equals(boot.get());
        if (granted.fence() < highest && !earlierBoot) {
            throw new LeaseCorruptException(name, "the record is " + granted.state().json() + " at fence " + granted.fence()
                    + " but fence " + highest + " was granted since: it was rolled back; break the lease to go on");
        }
        return granted;
    }

    /** The record of a grant that must still be {@code fence}'s and {@code holder}'s, or why it is lost. */
    private static LeaseRecord still(String name, Optional<LeaseRecord> current, long fence, Optional<Identity> holder)
            throws LeaseLostException {
        LeaseRecord r = current.orElseThrow(() -> new LeaseLostException(name, "there is no record"));
        if (!r.granted() || r.fence() != fence || holder.isPresent() && !LeaseRules.sameProcess(r.holder(), holder.get())) {
            throw new LeaseLostException(name, "the record is " + r.state().json() + " at fence " + r.fence()
                    + " for pid " + r.holder().pid() + ", not granted at fence " + fence
                    + holder.map(h -> " for pid " + h.pid()).orElse(""));
        }
        return r;
    }

    /** Renews the grant at {@code fence} (of {@code holder}, when given); the record's TTL kept unless the policy sets one. */
    LeaseRecord renew(String name, long fence, Optional<Identity> holder) throws IOException {
        if (book.lost(name, fence)) {
            throw new LeaseLostException(name, "its keep-alive failed for longer than its TTL allows");
        }
        return book.locked(name, guard -> {
            LeaseRecord r = still(name, guard.record(), fence, holder);
            trusted(name, r, guard);
            Duration ttl = policy.renewalTtl().orElse(r.ttl());
            LeaseRecord renewed = r.renewed(writer, now(), ttl);
            guard.replace(renewed);
            return renewed;
        });
    }

    /**
     * Ends the grant at {@code fence} (of {@code holder}, when given) as {@code how}: a released
     * record that says how, with the holder's verdict now.
     *
     * @return true if it is ended at that fence now (also when it already was); false, and nothing
     *         written, when there is no record, it is at another fence or another holder's
     */
    boolean end(String name, long fence, Optional<Identity> holder, LeaseRecord.Ending.How how,
                java.util.OptionalLong exitCode) throws IOException {
        return end(name, fence, holder, how, exitCode, Optional.empty());
    }

    /** As {@link #end}, with the verdict to record (the holder's end as its watch or a keeper saw it). */
    boolean end(String name, long fence, Optional<Identity> holder, LeaseRecord.Ending.How how,
                java.util.OptionalLong exitCode, Optional<Verdict> verdict) throws IOException {
        return end(name, fence, holder, how, exitCode, verdict, Optional.empty());
    }

    /**
     * A reservation's child that exited before it was handed the lease ({@code child}: as
     * identified, or by its pid alone when it exited before that): the lease ends as exited with
     * {@code verdict} once nothing carries its token. While a process the child started may carry
     * it (a chain that re-forks ended under every pass of the scan), the lease becomes the child's
     * — DEAD now — so that it is judged by its carriers from then on, never held on by the live
     * reserver.
     *
     * @return as {@link #end}
     */
    boolean childExited(String name, long fence, Identity reserver, Identity child, java.util.OptionalLong exitCode,
                        Verdict verdict) throws IOException {
        return end(name, fence, Optional.of(reserver), LeaseRecord.Ending.How.EXITED, exitCode, Optional.of(verdict),
                Optional.of(child));
    }

    private boolean end(String name, long fence, Optional<Identity> holder, LeaseRecord.Ending.How how,
                        java.util.OptionalLong exitCode, Optional<Verdict> verdict, Optional<Identity> child)
            throws IOException {
        return book.locked(name, guard -> {
            Optional<LeaseRecord> current = guard.record();
            if (current.isEmpty() || current.get().fence() != fence) {
                return false;
            }
            LeaseRecord r = current.get();
            if (!r.granted()) {
                return true;
            }
            if (holder.isPresent() && !LeaseRules.sameProcess(r.holder(), holder.get())) {
                return false;
            }
            trusted(name, r, guard);
            if (how == LeaseRecord.Ending.How.EXITED && r.tokenDigest().isPresent()) {
                Carriers left = carriers(name, guard, r);
                if (left == Carriers.PERHAPS && child.isPresent() && r.state() == LeaseRecord.State.RESERVED) {
                    guard.replace(r.with(LeaseRecord.State.HELD, child.get(), writer, Optional.empty())
                            .renewed(writer, now(), r.ttl()));
                }
                if (left != Carriers.GONE) {
                    return false; // the token lives on in a process the child started: the lease is still in use
                }
            }
            Verdict then = verdict.orElseGet(() -> checker.explain(r.holder()));
            guard.replace(r.ended(writer, new LeaseRecord.Ending(how, notBefore(r.acquiredAt()), then, exitCode)));
            return true;
        });
    }

    /** What a scan for a lease's token found, before a spawned child's exit ends the lease. */
    private enum Carriers {
        /** None: the lease may end. */
        GONE,
        /** One, and the lease is now its. */
        ADOPTED,
        /** None seen, but processes kept ending under every pass: one may be among them. */
        PERHAPS
    }

    /**
     * Whether a process still carries {@code r}'s token, before a spawned child's exit ends its
     * lease: a child that daemonised (forked and exited) leaves the process that writes under the
     * fence behind. One is found: the lease becomes the outermost carrier's, as a newcomer's scan
     * would make it (written here, under the lock); so too while processes keep ending under every
     * pass of the scan (a chain that re-forks), perhaps. The child's descendants run as the
     * reserver's user, whose environments this scan reads: a scan left partial for good by other
     * users' processes (a normal user's view) does not keep the lease from ending.
     */
    private Carriers carriers(String name, LeaseBook.Guard guard, LeaseRecord r) throws IOException {
        guard.confirm();
        EnvironmentScan scan = carriers.scan(name, r);
        Optional<dev.proclive.spi.ProcessInfo> found = LeaseRules.firstCarrier(scan.carriers());
        if (found.isPresent()) {
            adopt(name, guard, r, found.get(), notBefore(r.acquiredAt()));
            return Carriers.ADOPTED;
        }
        return scan.complete() || !scan.passAgain() ? Carriers.GONE : Carriers.PERHAPS;
    }

    /** The operator's override: ends the grant whoever holds it, as broken; the released record, or empty. */
    Optional<LeaseRecord> breakLease(String name) throws IOException {
        return book.locked(name, guard -> {
            Optional<LeaseRecord> current = guard.record();
            if (current.isEmpty()) {
                return Optional.empty();
            }
            LeaseRecord r = current.get();
            LeaseRecord broken = r.granted()
                    ? r.ended(writer, new LeaseRecord.Ending(LeaseRecord.Ending.How.BROKEN, notBefore(r.acquiredAt()),
                            checker.explain(r.holder()), java.util.OptionalLong.empty()))
                    : r.with(LeaseRecord.State.RELEASED, r.holder(), writer, r.ended());
            guard.replace(broken); // a guard found below the record's fence is raised to it
            return Optional.of(broken);
        });
    }

    /**
     * Hands the grant at {@code fence} of {@code from} to {@code to}: from a reservation the fence is
     * kept (the reserver never wrote under it), from a held lease it is the next one (the old
     * writer's late writes must be refused).
     *
     * @throws IllegalArgumentException if {@code to} is not ALIVE
     */
    LeaseRecord handOff(String name, long fence, Identity from, Identity to) throws IOException {
        Verdict alive = checker.explain(to);
        if (alive.liveness() != Liveness.ALIVE) {
            throw new IllegalArgumentException("a lease is handed to a live process only; the new holder is " + alive);
        }
        return book.locked(name, guard -> {
            LeaseRecord r = still(name, guard.record(), fence, Optional.of(from));
            trusted(name, r, guard);
            Instant now = now();
            if (r.state() == LeaseRecord.State.RESERVED) {
                LeaseRecord held = r.with(LeaseRecord.State.HELD, to, writer, Optional.empty()).renewed(writer, now, r.ttl());
                guard.replace(held);
                return held;
            }
            return guard.grant(new LeaseRecord(name, 0, LeaseRecord.State.HELD, to, writer, now, now, r.ttl(),
                    Optional.empty(), r.tokenDigest(), r.reserverUid(), Optional.empty(), r.startedAfter(), Optional.empty()));
        });
    }
}
