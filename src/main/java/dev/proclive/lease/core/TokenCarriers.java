package dev.proclive.lease.core;

import dev.proclive.lease.book.Records;
import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Cgroup;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.spi.internal.KernelIntrospector;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import dev.proclive.text.OneLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/** The processes that carry a reservation's token ({@code PROCLIVE_LEASE_TOKEN} in their initial environment). */
final class TokenCarriers {

    /** A complete answer that found nobody. */
    private static final EnvironmentScan NONE = new EnvironmentScan(List.of(), true, "");

    private final LivenessChecker checker;
    private final ProcessIntrospector introspector;
    private final Descendants descendants;

    TokenCarriers(LivenessChecker checker, Descendants descendants) {
        this.checker = checker;
        this.introspector = checker.introspector();
        this.descendants = descendants;
    }

    /** What a look for a reservation's carriers found, and how: {@code "cgroup"} or {@code "token"}. */
    record Carried(EnvironmentScan scan, String how) {
    }

    /** Empty when {@code holder}'s initial environment cannot be read; false too for another process under its pid. */
    Optional<Boolean> carries(Identity holder, String token) {
        return carriesWhere(holder, token::equals);
    }

    /** The process a launcher started with {@code token}: the top of {@code from}'s chain of carriers, if any. */
    Optional<Identity> outermost(Identity from, String token) {
        Optional<Identity> found = Optional.empty();
        Identity at = from;
        for (int depth = 0; depth < 64; depth++) {
            if (!carries(at, token).orElse(false)) {
                return found;
            }
            found = Optional.of(at);
            if (!(introspector.lookupProcess(at.pid()) instanceof ProcessLookup.Found f)) {
                return found;
            }
            Optional<Identity> parent = checker.identify(f.info().parentPid());
            if (parent.isEmpty()) {
                return found;
            }
            at = parent.get();
        }
        return found;
    }

    /** As {@link #carries}, for a token whose digest is {@code digest}. */
    Optional<Boolean> carriesDigest(Identity holder, String digest) {
        return carriesDigestOf(holder, digest::equals);
    }

    Optional<Boolean> carriesDigestOf(Identity holder, Predicate<String> digests) {
        return carriesWhere(holder, value -> digests.test(Records.digest(value)));
    }

    private Optional<Boolean> carriesWhere(Identity holder, Predicate<String> token) {
        EnvironmentScan env = KernelIntrospector.of(introspector).readEnvironment(holder.pid(), LeaseNames.TOKEN_VARIABLE, token);
        if (!env.complete()) {
            return Optional.empty();
        }
        return Optional.of(env.carriers().stream().anyMatch(c -> introspector.sameStart(holder.start(), c.start())));
    }

    /**
     * A local cgroup's members carry the token whatever a daemon did to its environment; a cgroup proves who is inside,
     * never who left, so an empty one is removed and the token scanned for too. Only the reserver's user counts.
     *
     * @throws LeaseCorruptException if the record's {@code startedAfter} is not a start time of this boot: a floor
     *                               above every process would make any scan empty
     */
    Carried scan(String name, LeaseRecord reserved) throws LeaseCorruptException {
        Optional<String> floor = floor(name, reserved);
        Optional<Cgroup> cgroup = Cgroup.of(reserved).filter(c -> local(reserved));
        Optional<EnvironmentScan> members = cgroup.flatMap(this::members);
        if (members.isPresent() && !members.get().carriers().isEmpty()) {
            return new Carried(members.get(), "cgroup");
        }
        Carried scanned;
        if (reserved.tokenDigest().isEmpty()) {
            // its token was retired at the hand-off: nothing carries it, and the holder's death is the proof
            scanned = new Carried(NONE, "cgroup");
        } else {
            String digest = reserved.tokenDigest().get();
            scanned = new Carried(KernelIntrospector.of(introspector).scanEnvironments(LeaseNames.TOKEN_VARIABLE,
                    value -> Records.digest(value).equals(digest), reserved.reserverUid().orElse(-1), floor), "token");
        }
        if (cgroup.isPresent() && members.isEmpty() && scanned.scan().carriers().isEmpty()) {
            // what stayed inside may carry no token (a daemon that cleared its environment): nothing proves it gone
            return new Carried(EnvironmentScan.incomplete("cgroup " + cgroup.get().path() + " cannot be read here (another"
                    + " cgroup namespace, or no cgroup2 file system at that path): what its command left inside is not known"),
                    scanned.how());
        }
        return scanned;
    }

    /** Whether {@code r}'s cgroup path is this machine's, of this boot: its holder is. */
    private boolean local(LeaseRecord r) {
        Optional<String> boot = introspector.bootId();
        return boot.isPresent() && r.holder().boot().equals(boot.get())
                && r.holder().machine().equals(checker.current().map(Identity::machine).orElse(""));
    }

    /** The members of {@code cgroup}, a complete answer; empty when it proves nothing. An empty one is removed. */
    private Optional<EnvironmentScan> members(Cgroup cgroup) {
        for (int read = 0; read < 3; read++) {
            Optional<List<Long>> pids = descendants.members(cgroup.path(), cgroup.id());
            if (pids.isEmpty()) {
                return Optional.empty();
            }
            if (pids.get().isEmpty()) {
                descendants.remove(cgroup.path());
                return Optional.of(NONE);
            }
            List<ProcessInfo> found = new ArrayList<>();
            for (long pid : pids.get()) {
                if (introspector.lookupProcess(pid) instanceof ProcessLookup.Found f && f.info().state() == ProcessState.LIVE) {
                    found.add(f.info());
                }
            }
            if (!found.isEmpty()) {
                return Optional.of(new EnvironmentScan(found, true, ""));
            }
            // they all ended as they were read: read the cgroup again
        }
        return Optional.empty(); // members that cannot be read as live processes: no proof either way
    }

    /** The record's {@code startedAfter}, checked before any proof is read: whatever a cgroup would say. */
    private Optional<String> floor(String name, LeaseRecord reserved) throws LeaseCorruptException {
        Optional<String> floor = reserved.startedAfter();
        if (floor.isPresent()) {
            Optional<String> now = KernelIntrospector.of(introspector).startFloor();
            if (now.isPresent() && !LeaseRules.floorWithin(floor.get(), now.get())) {
                throw new LeaseCorruptException(name, "\"startedAfter\" is " + OneLine.quote(floor.get())
                        + ", which is no start time of this boot (processes start after " + now.get()
                        + " now); break the lease to go on");
            }
        }
        return floor;
    }
}
