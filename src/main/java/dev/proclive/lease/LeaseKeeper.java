package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.spi.EnvironmentScan;
import dev.proclive.spi.ProcessIntrospector;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The store's work on one lease: lock it, read it, decide ({@link LeaseRules}), write what was
 * decided. Knows nothing of {@link Lease} or {@link Acquisition}: it answers with records, and
 * {@link LeaseStore} and {@link Lease} make the API of them.
 */
final class LeaseKeeper {

    /** The environment variable a spawned process finds its reservation's token in. */
    static final String TOKEN_VARIABLE = "PROCLIVE_LEASE_TOKEN";

    private static final SecureRandom TOKENS = new SecureRandom();

    final LeaseFiles files;
    final LeasePolicy policy;
    final Identity writer;
    final LivenessChecker checker;
    private final ProcessIntrospector introspector;
    private final Clock clock;

    LeaseKeeper(LeaseFiles files, LeasePolicy policy, Identity writer, LivenessChecker checker,
                ProcessIntrospector introspector, Clock clock) {
        this.files = files;
        this.policy = policy;
        this.writer = writer;
        this.checker = checker;
        this.introspector = introspector;
        this.clock = clock;
    }

    /** What a request came to. */
    sealed interface Result {
    }

    /** Granted: the record written; {@code replaced}, the one before; {@code again}, the same holder's. */
    record Granted(LeaseRecord record, Optional<LeaseRecord> replaced, boolean again) implements Result {
    }

    /** Another holder has it and is ALIVE. */
    record Held(LeaseRecord record, Verdict verdict) implements Result {
    }

    /** Another holder has it and its end cannot be proven. */
    record Undecided(LeaseRecord record, Verdict verdict, Optional<Instant> eligibleAt) implements Result {
    }

    Instant now() {
        return clock.instant().truncatedTo(ChronoUnit.MILLIS);
    }

    Verdict explain(Identity id) {
        return checker.explain(id);
    }

    /** Decides {@code request} for lease {@code name} and writes what was decided. */
    Result request(String name, LeaseRules.Request request) throws IOException {
        return files.locked(name, guard -> {
            Optional<LeaseRecord> current = files.read(name);
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
                    LeaseRecord r = current.orElseThrow();
                    scan = Optional.of(introspector.scanEnvironments(TOKEN_VARIABLE + "=" + r.token().orElseThrow(),
                            r.startedAfter()));
                } else {
                    return apply(name, guard, request, current, d, now);
                }
            }
        });
    }

    private Result apply(String name, LeaseFiles.Guard guard, LeaseRules.Request request, Optional<LeaseRecord> current,
                         LeaseRules.Decision d, Instant now) throws IOException {
        if (d instanceof LeaseRules.Grant grant) {
            long fence = next(name, guard, current.map(LeaseRecord::fence).orElse(0L));
            boolean reserve = request.kind() == LeaseRules.Kind.RESERVE;
            LeaseRecord granted = new LeaseRecord(name, fence,
                    reserve ? LeaseRecord.State.RESERVED : LeaseRecord.State.HELD, request.who(), writer, now, now,
                    policy.ttl(), grant.previous(), reserve ? Optional.of(newToken()) : Optional.empty(),
                    Optional.empty(), reserve ? introspector.startFloor() : Optional.empty(), Optional.empty());
            files.replace(name, granted);
            guard.fence(fence);
            return new Granted(granted, current, false);
        }
        LeaseRecord r = current.orElseThrow();
        if (d instanceof LeaseRules.Again) {
            LeaseRecord again = r.with(r.state(), request.who(), writer, Optional.empty()).renewed(writer, now, policy.ttl());
            files.replace(name, again);
            return new Granted(again, current, true);
        }
        if (d instanceof LeaseRules.Claim) {
            LeaseRecord claimed = r.with(LeaseRecord.State.HELD, request.who(), writer, Optional.empty())
                    .renewed(writer, now, r.ttl());
            files.replace(name, claimed);
            return new Granted(claimed, current, false);
        }
        if (d instanceof LeaseRules.Adopt adopt) {
            Optional<Identity> carrier = checker.identify(adopt.carrier().pid())
                    .filter(id -> id.start().equals(adopt.carrier().start()));
            Verdict reserver = checker.explain(r.holder());
            if (carrier.isEmpty()) {
                return new Undecided(r, reserver, Optional.empty()); // it ended as it was found: ask again
            }
            LeaseRecord adopted = new LeaseRecord(name, r.fence(), LeaseRecord.State.HELD, carrier.get(), writer,
                    r.acquiredAt(), now, r.ttl(), r.previous(), r.token(), Optional.of("token"), r.startedAfter(),
                    Optional.empty());
            files.replace(name, adopted);
            return new Held(adopted, checker.explain(carrier.get()));
        }
        if (d instanceof LeaseRules.Held held) {
            return new Held(r, held.verdict());
        }
        LeaseRules.Undecided undecided = (LeaseRules.Undecided) d;
        return new Undecided(r, undecided.verdict(), undecided.eligibleAt());
    }

    /** The fence after any this lease ever had, never past 2^63-1. */
    private static long next(String name, LeaseFiles.Guard guard, long recordFence) throws IOException {
        long highest = Math.max(guard.fence(), recordFence);
        if (highest == Long.MAX_VALUE) {
            throw new LeaseCorruptException(name, "it has granted its last fence, " + Long.MAX_VALUE
                    + "; nothing was granted (use another name)");
        }
        return highest + 1;
    }

    private static String newToken() {
        byte[] bits = new byte[16];
        TOKENS.nextBytes(bits);
        return HexFormat.of().formatHex(bits);
    }

    /**
     * A granted record, if its fence is not below the guard's: one that is was restored from an old
     * copy (the guard only grows), and granting or renewing it would hand out a fence already given.
     */
    private static LeaseRecord trusted(String name, LeaseRecord granted, LeaseFiles.Guard guard) throws IOException {
        long highest = guard.fence();
        if (granted.fence() < highest) {
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
        return files.locked(name, guard -> {
            LeaseRecord r = still(name, files.read(name), fence, holder);
            trusted(name, r, guard);
            Duration ttl = policy.renewalTtl().orElse(r.ttl());
            LeaseRecord renewed = r.renewed(writer, now(), ttl);
            files.replace(name, renewed);
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

    /** As {@link #end}, with the verdict to record when the record's holder is not the one that ended (a reservation's child). */
    boolean end(String name, long fence, Optional<Identity> holder, LeaseRecord.Ending.How how,
                java.util.OptionalLong exitCode, Optional<Verdict> verdict) throws IOException {
        return files.locked(name, guard -> {
            Optional<LeaseRecord> current = files.read(name);
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
            Verdict then = verdict.orElseGet(() -> checker.explain(r.holder()));
            files.replace(name, r.ended(writer, new LeaseRecord.Ending(how, now(), then, exitCode)));
            return true;
        });
    }

    /** The operator's override: ends the grant whoever holds it, as broken; the released record, or empty. */
    Optional<LeaseRecord> breakLease(String name) throws IOException {
        return files.locked(name, guard -> {
            Optional<LeaseRecord> current = files.read(name);
            if (current.isEmpty()) {
                return Optional.empty();
            }
            LeaseRecord r = current.get();
            LeaseRecord broken = r.granted()
                    ? r.ended(writer, new LeaseRecord.Ending(LeaseRecord.Ending.How.BROKEN, now(),
                            checker.explain(r.holder()), java.util.OptionalLong.empty()))
                    : r.with(LeaseRecord.State.RELEASED, r.holder(), writer, r.ended());
            files.replace(name, broken);
            guard.fence(Math.max(guard.fence(), r.fence()));
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
        return files.locked(name, guard -> {
            LeaseRecord r = still(name, files.read(name), fence, Optional.of(from));
            trusted(name, r, guard);
            Instant now = now();
            if (r.state() == LeaseRecord.State.RESERVED) {
                LeaseRecord held = r.with(LeaseRecord.State.HELD, to, writer, Optional.empty()).renewed(writer, now, r.ttl());
                files.replace(name, held);
                return held;
            }
            long next = next(name, guard, r.fence());
            LeaseRecord held = new LeaseRecord(name, next, LeaseRecord.State.HELD, to, writer, now, now, r.ttl(),
                    Optional.empty(), r.token(), Optional.empty(), r.startedAfter(), Optional.empty());
            files.replace(name, held);
            guard.fence(next);
            return held;
        });
    }
}
