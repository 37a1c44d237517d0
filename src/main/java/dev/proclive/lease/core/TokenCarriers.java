package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.spi.EnvironmentScan;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.text.OneLine;
import java.util.Optional;

/**
 * The processes that carry a reservation's token ({@code PROCLIVE_LEASE_TOKEN} in their initial
 * environment): a scan of this host for them, as a proof; whether one process carries it; and
 * the one a launcher started, seen from below.
 */
final class TokenCarriers {

    private final LivenessChecker checker;
    private final ProcessIntrospector introspector;

    TokenCarriers(LivenessChecker checker, ProcessIntrospector introspector) {
        this.checker = checker;
        this.introspector = introspector;
    }

    /**
     * Whether {@code holder}'s initial environment holds {@code PROCLIVE_LEASE_TOKEN=token}: empty
     * when it cannot be read; false when it does not, or what was read is another process under
     * {@code holder}'s pid.
     */
    Optional<Boolean> carries(Identity holder, String token) {
        EnvironmentScan env = introspector.readEnvironment(holder.pid(), LeaseNames.TOKEN_VARIABLE, token::equals);
        if (!env.complete()) {
            return Optional.empty();
        }
        return Optional.of(env.carriers().stream().anyMatch(c -> introspector.sameStart(holder.start(), c.start())));
    }

    /**
     * The outermost of {@code from} and its ancestors that carry {@code token}, each one's parent
     * carrying it too: the process a launcher started with it (its own parent does not carry it).
     * Empty when {@code from} does not carry it.
     */
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

    /**
     * A scan for the carriers of {@code reserved}'s token, as a proof (the introspector passes over
     * the process list again while processes end under it, a bounded number of times). Only
     * carriers of the reserver's user count.
     *
     * @throws LeaseCorruptException if the record's {@code startedAfter} is not a start time of this
     *                               boot: a floor above every process would make any scan empty
     */
    EnvironmentScan scan(String name, LeaseRecord reserved) throws LeaseCorruptException {
        Optional<String> floor = reserved.startedAfter();
        if (floor.isPresent()) {
            Optional<String> now = introspector.startFloor();
            if (now.isPresent() && !LeaseRules.floorWithin(floor.get(), now.get())) {
                throw new LeaseCorruptException(name, "\"startedAfter\" is " + OneLine.quote(floor.get())
                        + ", which is no start time of this boot (processes start after " + now.get()
                        + " now); break the lease to go on");
            }
        }
        String digest = reserved.tokenDigest().orElseThrow();
        long uid = reserved.reserverUid().orElse(-1);
        return introspector.scanEnvironments(LeaseNames.TOKEN_VARIABLE, value -> LeaseRecord.digest(value).equals(digest),
                uid, floor);
    }
}
