package dev.proclive.lease.core;

import dev.proclive.lease.book.Records;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.Verdict;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** Who gets a lease: a pure function of facts the store gathers (record, request, verdict, scan, policy, time). */
final class LeaseRules {

    private LeaseRules() {
    }

    enum Kind {
        ACQUIRE,
        /** A lease for a process about to start, reserved by {@code who}. */
        RESERVE,
        /** The reservation of {@code token}, for {@code who}, which carries it. */
        CLAIM
    }

    /**
     * @param who     the holder asked for (of a reservation: the reserver)
     * @param carrier {@code who}'s initial environment was read and holds the token: only a proven carrier claims
     */
    record Request(Kind kind, Identity who, Optional<String> token, boolean carrier) {
        static Request acquire(Identity who) {
            return new Request(Kind.ACQUIRE, who, Optional.empty(), false);
        }

        static Request reserve(Identity reserver) {
            return new Request(Kind.RESERVE, reserver, Optional.empty(), false);
        }

        static Request claim(Identity who, String token, boolean carrier) {
            return new Request(Kind.CLAIM, who, Optional.of(token), carrier);
        }
    }

    sealed interface Decision {
    }

    /** A new grant with the next fence, over a free lease or one taken over ({@code previous}). */
    record Grant(Optional<LeaseRecord.Takeover> previous) implements Decision {
    }

    /** The same holder's grant again: same fence, renewed. */
    record Again() implements Decision {
    }

    /** The reservation becomes the claimer's, its fence kept. */
    record Claim() implements Decision {
    }

    /** The reservation is in use: it becomes {@code carrier}'s, its fence kept; the asker is told Held. */
    record Adopt(ProcessInfo carrier) implements Decision {
    }

    /** The holder is ALIVE. */
    record Held(Verdict verdict) implements Decision {
    }

    /** The holder's end cannot be proven; {@code eligibleAt}: when the policy would take it over. */
    record Undecided(Verdict verdict, Optional<Instant> eligibleAt) implements Decision {
    }

    /** Ask again with one more fact: the holder's verdict, a scan for the token, or the book's freshness. */
    enum Need implements Decision {
        VERDICT,
        SCAN,
        FRESHNESS
    }

    /**
     * Each fact is given once the decision asked for it. {@code fresh} is the book's word: a record kept alive without
     * being rewritten is fresh while what keeps it lives.
     */
    static Decision decide(Request request, Optional<LeaseRecord> current, Optional<Verdict> verdict,
                           Optional<EnvironmentScan> scan, Optional<Instant> fresh, LeasePolicy policy, Instant now) {
        if (current.isEmpty() || !current.get().granted()) {
            return new Grant(Optional.empty());
        }
        LeaseRecord r = current.get();
        // "Again" is for a held lease only: a reservation is one intent, so a second reserve by its own reserver is
        // Held like anyone's (two spawns would start two children with one token).
        if (r.state() == LeaseRecord.State.HELD && request.kind() != Kind.RESERVE && Records.sameProcess(r.holder(), request.who())) {
            return new Again();
        }
        if (r.state() == LeaseRecord.State.RESERVED && request.kind() == Kind.CLAIM && request.carrier()
                && Records.hasToken(r, request.token().orElseThrow())) {
            return new Claim();
        }
        if (verdict.isEmpty()) {
            return Need.VERDICT;
        }
        Verdict v = verdict.get();
        if (v.liveness() == Liveness.ALIVE) {
            return new Held(v);
        }
        // A reservation, or a DEAD holder's grant from one, belongs to its token's carriers (a re-forked daemon or a
        // grandchild still writes under the fence), or to what the kernel says its cgroup holds. A reboot took all.
        boolean carried = (r.tokenDigest().isPresent() || r.cgroup().isPresent())
                && (r.state() == LeaseRecord.State.RESERVED || v.liveness() == Liveness.DEAD);
        if (carried && v.reason() != dev.proclive.Reason.REBOOTED) {
            if (scan.isEmpty()) {
                return Need.SCAN;
            }
            Optional<ProcessInfo> carrier = firstCarrier(scan.get().carriers());
            if (carrier.isPresent()) {
                return new Adopt(carrier.get());
            }
            // never free what something may still use: a partial scan, or a reserver not proven DEAD
            if (!scan.get().complete() || v.liveness() != Liveness.DEAD) {
                return new Undecided(v, Optional.empty());
            }
        } else if (v.liveness() == Liveness.UNKNOWN) {
            if (!policy.takeUnknownAfterTtl()) {
                return new Undecided(v, Optional.empty());
            }
            if (fresh.isEmpty()) {
                return Need.FRESHNESS;
            }
            if (now.isBefore(fresh.get())) {
                return new Undecided(v, fresh);
            }
        }
        if (request.kind() == Kind.CLAIM) {
            return new Undecided(v, Optional.empty()); // a claim takes nothing over
        }
        // never before the renewal it follows: a clock behind the holder's would make the record contradict itself
        Instant at = now.isBefore(r.renewedAt()) ? r.renewedAt() : now;
        return new Grant(Optional.of(new LeaseRecord.Takeover(r.fence(), r.holder(), v, at, Optional.of(r.renewedAt()))));
    }

    /** The carrier the launcher started: one whose parent does not carry the token, the oldest such. */
    static Optional<ProcessInfo> firstCarrier(List<ProcessInfo> carriers) {
        Set<Long> pids = carriers.stream().map(ProcessInfo::pid).collect(Collectors.toSet());
        return carriers.stream().filter(c -> !pids.contains(c.parentPid()))
                .min(Comparator.comparing((ProcessInfo c) -> startOf(c.start())).thenComparingLong(ProcessInfo::pid));
    }

    /** A start fingerprint as a number (Linux ticks, macOS seconds.micros); one that is not sorts last. */
    private static BigDecimal startOf(String start) {
        try {
            return new BigDecimal(start);
        } catch (NumberFormatException e) {
            return BigDecimal.valueOf(Long.MAX_VALUE);
        }
    }

    /** Whether {@code startedAfter} can be a start floor of this boot: of the floor's form now, and not after it. */
    static boolean floorWithin(String startedAfter, String floorNow) {
        if (startedAfter.contains(".") != floorNow.contains(".")) {
            return false;
        }
        try {
            return new BigDecimal(startedAfter).compareTo(new BigDecimal(floorNow)) <= 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }

}
