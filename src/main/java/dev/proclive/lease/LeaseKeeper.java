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
    private final Grants grants;

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
        this.grants = new Grants(book, policy, writer, checker, introspector, clock, carriers);
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

    /** The store's time, to the millisecond. */
    Instant now() {
        return grants.now();
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
            Optional<LeaseRecord> adopted = grants.adopt(name, guard, r, adopt.carrier(), now);
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

    private static String newToken() {
        byte[] bits = new byte[16];
        TOKENS.nextBytes(bits);
        return HexFormat.of().formatHex(bits);
    }

}
