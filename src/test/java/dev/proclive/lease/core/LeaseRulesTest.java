package dev.proclive.lease.core;

import dev.proclive.lease.book.Records;
import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Who gets a lease, decided without files, processes or a clock: every rule, on every OS. */
class LeaseRulesTest {

    static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");
    static final String TOKEN = "0123456789abcdef0123456789abcdef";
    static final Identity HOLDER = new Identity(100, "500", "b", "h", "holder", "ns");
    static final Identity NEWCOMER = new Identity(200, "600", "b", "h", "newcomer", "ns");
    static final Verdict ALIVE = Verdict.of(Reason.MATCHED, "");
    static final Verdict DEAD = Verdict.of(Reason.EXITED, "");
    static final Verdict UNKNOWN = Verdict.of(Reason.OTHER_HOST, "");
    static final LeasePolicy NEVER = LeasePolicy.defaults();
    static final LeasePolicy AFTER_TTL = LeasePolicy.builder().takeUnknownAfterTtl(true).build();

    static LeaseRecord record(LeaseRecord.State state, Instant renewedAt) {
        return new LeaseRecord("build", 7, state, HOLDER, HOLDER, renewedAt, renewedAt, Duration.ofSeconds(30),
                Optional.empty(), state == LeaseRecord.State.RESERVED ? Optional.of(Records.digest(TOKEN)) : Optional.empty(),
                state == LeaseRecord.State.RESERVED ? java.util.OptionalLong.of(1000) : java.util.OptionalLong.empty(),
                Optional.empty(), Optional.of("400"), Optional.empty());
    }

    static LeaseRecord held() {
        return record(LeaseRecord.State.HELD, NOW);
    }

    static LeaseRecord reserved() {
        return record(LeaseRecord.State.RESERVED, NOW);
    }

    static LeaseRules.Decision decide(LeaseRules.Request request, LeaseRecord r, Verdict v, EnvironmentScan scan,
                                      LeasePolicy policy) {
        return LeaseRules.decide(request, Optional.ofNullable(r), Optional.ofNullable(v), Optional.ofNullable(scan),
                Optional.ofNullable(r).map(LeaseRecord::freshUntil), policy, NOW);
    }

    static ProcessInfo process(long pid, long ppid, String start) {
        return new ProcessInfo(pid, ppid, "child", start, ProcessState.LIVE);
    }

    static EnvironmentScan complete(ProcessInfo... carriers) {
        return new EnvironmentScan(List.of(carriers), true, "");
    }

    /**
     * Where a book tells a record's freshness apart from it (a record kept alive without being
     * rewritten), an UNKNOWN holder's lease is taken by that, not by {@code renewedAt}: the rules
     * ask for it, wait while it lasts, and take once it is past, however old {@code renewedAt} is.
     */
    @Test
    void aFreshnessToldByTheBookDecidesWhenAnUnknownHoldersLeaseIsTaken() {
        LeaseRules.Request newcomer = LeaseRules.Request.acquire(NEWCOMER);
        Optional<LeaseRecord> old = Optional.of(record(LeaseRecord.State.HELD, NOW.minus(Duration.ofHours(1))));
        assertThat(LeaseRules.decide(newcomer, old, Optional.of(UNKNOWN), Optional.empty(), Optional.empty(), AFTER_TTL, NOW))
                .isEqualTo(LeaseRules.Need.FRESHNESS);
        Instant sessionEnds = NOW.plusSeconds(12);
        assertThat(LeaseRules.decide(newcomer, old, Optional.of(UNKNOWN), Optional.empty(), Optional.of(sessionEnds), AFTER_TTL, NOW))
                .isEqualTo(new LeaseRules.Undecided(UNKNOWN, Optional.of(sessionEnds)));
        assertThat(LeaseRules.decide(newcomer, old, Optional.of(UNKNOWN), Optional.empty(), Optional.of(NOW), AFTER_TTL, NOW))
                .isInstanceOf(LeaseRules.Grant.class);
        assertThat(LeaseRules.decide(newcomer, old, Optional.of(UNKNOWN), Optional.empty(), Optional.empty(), NEVER, NOW))
                .as("not asked where UNKNOWN is never taken").isEqualTo(new LeaseRules.Undecided(UNKNOWN, Optional.empty()));
    }

    @Test
    void aFreeOrReleasedLeaseIsGrantedToAnyone() {
        for (LeaseRules.Request r : List.of(LeaseRules.Request.acquire(NEWCOMER), LeaseRules.Request.reserve(NEWCOMER),
                LeaseRules.Request.claim(NEWCOMER, TOKEN, true))) {
            assertThat(decide(r, null, null, null, NEVER)).isEqualTo(new LeaseRules.Grant(Optional.empty()));
            assertThat(decide(r, record(LeaseRecord.State.RELEASED, NOW), null, null, NEVER))
                    .isEqualTo(new LeaseRules.Grant(Optional.empty()));
        }
    }

    @Test
    void theSameHolderIsGrantedAgainWithoutBeingJudged() {
        assertThat(decide(LeaseRules.Request.acquire(HOLDER), held(), null, null, NEVER)).isInstanceOf(LeaseRules.Again.class);
        assertThat(decide(LeaseRules.Request.claim(HOLDER, "f".repeat(32), true), held(), null, null, NEVER))
                .isInstanceOf(LeaseRules.Again.class);
        Identity renamed = new Identity(100, "500", "b", "h", "other name", "ns");
        assertThat(decide(LeaseRules.Request.acquire(renamed), held(), null, null, NEVER)).as("the name is for people")
                .isInstanceOf(LeaseRules.Again.class);
        Identity reused = new Identity(100, "501", "b", "h", "holder", "ns");
        assertThat(decide(LeaseRules.Request.acquire(reused), held(), null, null, NEVER))
                .isEqualTo(LeaseRules.Need.VERDICT);
        assertThat(decide(LeaseRules.Request.acquire(HOLDER), reserved(), null, null, NEVER))
                .as("the reserver acquiring is a newcomer to its own reservation").isEqualTo(LeaseRules.Need.VERDICT);
    }

    @Test
    void aReservationIsOneIntentEvenForItsOwnReserver() {
        // Two spawns of one process: the second is judged, and a live reserver holds it.
        assertThat(decide(LeaseRules.Request.reserve(HOLDER), reserved(), null, null, NEVER))
                .isEqualTo(LeaseRules.Need.VERDICT);
        assertThat(decide(LeaseRules.Request.reserve(HOLDER), reserved(), ALIVE, null, NEVER))
                .isEqualTo(new LeaseRules.Held(ALIVE));
        assertThat(decide(LeaseRules.Request.reserve(HOLDER), held(), ALIVE, null, NEVER))
                .as("nor does a holder reserve over its own held lease").isEqualTo(new LeaseRules.Held(ALIVE));
    }

    @Test
    void aHeldLeaseFollowsItsHoldersVerdict() {
        LeaseRules.Request newcomer = LeaseRules.Request.acquire(NEWCOMER);
        assertThat(decide(newcomer, held(), null, null, NEVER)).isEqualTo(LeaseRules.Need.VERDICT);
        assertThat(decide(newcomer, held(), ALIVE, null, NEVER)).isEqualTo(new LeaseRules.Held(ALIVE));
        LeaseRules.Decision dead = decide(newcomer, held(), DEAD, null, NEVER);
        assertThat(dead).isEqualTo(new LeaseRules.Grant(Optional.of(
                new LeaseRecord.Takeover(7, HOLDER, DEAD, NOW, Optional.of(NOW)))));
        assertThat(decide(newcomer, held(), UNKNOWN, null, NEVER)).isEqualTo(new LeaseRules.Undecided(UNKNOWN, Optional.empty()));
    }

    /**
     * A newcomer whose clock is behind the dead holder's says it took over no earlier than that
     * holder's last renewal: a takeover dated before it made the record contradict itself, and
     * every later call refused it as corrupt (65) until a break.
     */
    @Test
    void aTakeoverIsDatedNoEarlierThanTheRenewalItFollows() throws Exception {
        LeaseRecord ahead = record(LeaseRecord.State.HELD, NOW.plusSeconds(5));
        LeaseRules.Decision d = decide(LeaseRules.Request.acquire(NEWCOMER), ahead, DEAD, null, NEVER);
        LeaseRecord.Takeover t = ((LeaseRules.Grant) d).previous().orElseThrow();
        assertThat(t.at()).isEqualTo(NOW.plusSeconds(5));
        LeaseRecord taken = new LeaseRecord("build", 8, LeaseRecord.State.HELD, NEWCOMER, NEWCOMER, NOW, NOW,
                Duration.ofSeconds(30), Optional.of(t));
        assertThat(dev.proclive.lease.book.LeaseJson.read("build", dev.proclive.lease.book.LeaseJson.write(taken)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8)).previous()).contains(t);
    }

    @Test
    void anUnknownHolderIsTakenOnlyByAPolicyThatSaysSoAndOnlyAfterItsOwnTtl() {
        LeaseRules.Request newcomer = LeaseRules.Request.acquire(NEWCOMER);
        LeaseRecord fresh = record(LeaseRecord.State.HELD, NOW.minusSeconds(29));
        assertThat(decide(newcomer, fresh, UNKNOWN, null, AFTER_TTL))
                .isEqualTo(new LeaseRules.Undecided(UNKNOWN, Optional.of(NOW.plusSeconds(1))));
        LeaseRecord stale = record(LeaseRecord.State.HELD, NOW.minusSeconds(30));
        assertThat(decide(newcomer, stale, UNKNOWN, null, AFTER_TTL)).isInstanceOf(LeaseRules.Grant.class);
        assertThat(decide(newcomer, stale, UNKNOWN, null, NEVER)).isInstanceOf(LeaseRules.Undecided.class);
        LeaseRecord longPromise = new LeaseRecord("build", 7, LeaseRecord.State.HELD, HOLDER, HOLDER, NOW, NOW.minusSeconds(60),
                Duration.ofMinutes(10), Optional.empty());
        assertThat(decide(newcomer, longPromise, UNKNOWN, null, AFTER_TTL)).as("the record's TTL, not the policy's")
                .isEqualTo(new LeaseRules.Undecided(UNKNOWN, Optional.of(NOW.plusSeconds(540))));
    }

    @Test
    void aClaimTakesItsReservationAndNothingElse() {
        assertThat(decide(LeaseRules.Request.claim(NEWCOMER, TOKEN, true), reserved(), null, null, NEVER))
                .isInstanceOf(LeaseRules.Claim.class);
        assertThat(decide(LeaseRules.Request.claim(NEWCOMER, TOKEN, false), reserved(), ALIVE, null, NEVER))
                .as("a claimer not proven to carry the token is a newcomer").isEqualTo(new LeaseRules.Held(ALIVE));
        LeaseRules.Request other = LeaseRules.Request.claim(NEWCOMER, "f".repeat(32), true);
        assertThat(decide(other, reserved(), ALIVE, null, NEVER)).isEqualTo(new LeaseRules.Held(ALIVE));
        assertThat(decide(other, held(), DEAD, null, NEVER)).as("a claim takes nothing over")
                .isEqualTo(new LeaseRules.Undecided(DEAD, Optional.empty()));
        assertThat(decide(LeaseRules.Request.claim(NEWCOMER, TOKEN, true), held(), DEAD, null, NEVER))
                .as("handed off already: the token no longer names a reservation").isInstanceOf(LeaseRules.Undecided.class);
        assertThat(decide(other, reserved(), DEAD, complete(), NEVER)).isInstanceOf(LeaseRules.Undecided.class);
    }

    @Test
    void aReservationWhoseReserverLivesIsHeld() {
        assertThat(decide(LeaseRules.Request.acquire(NEWCOMER), reserved(), ALIVE, null, NEVER))
                .isEqualTo(new LeaseRules.Held(ALIVE));
    }

    @Test
    void aReservationWhoseReserverIsGoneIsJudgedByAScanForItsToken() {
        LeaseRules.Request newcomer = LeaseRules.Request.acquire(NEWCOMER);
        assertThat(decide(newcomer, reserved(), DEAD, null, NEVER)).isEqualTo(LeaseRules.Need.SCAN);
        assertThat(decide(newcomer, reserved(), UNKNOWN, null, NEVER)).isEqualTo(LeaseRules.Need.SCAN);

        ProcessInfo child = process(300, 100, "450");
        assertThat(decide(newcomer, reserved(), DEAD, complete(child), NEVER)).isEqualTo(new LeaseRules.Adopt(child));
        assertThat(decide(newcomer, reserved(), UNKNOWN, new EnvironmentScan(List.of(child), false, "partial"), NEVER))
                .as("a carrier found is proof enough, whatever else could not be read").isEqualTo(new LeaseRules.Adopt(child));

        assertThat(decide(newcomer, reserved(), DEAD, complete(), NEVER)).as("never used: free")
                .isEqualTo(new LeaseRules.Grant(Optional.of(new LeaseRecord.Takeover(7, HOLDER, DEAD, NOW, Optional.of(NOW)))));
        assertThat(decide(LeaseRules.Request.reserve(NEWCOMER), reserved(), DEAD, complete(), NEVER))
                .isInstanceOf(LeaseRules.Grant.class);
        assertThat(decide(newcomer, reserved(), DEAD, EnvironmentScan.incomplete("hidepid"), AFTER_TTL))
                .as("never freed on a partial scan").isEqualTo(new LeaseRules.Undecided(DEAD, Optional.empty()));
        LeaseRecord stale = record(LeaseRecord.State.RESERVED, NOW.minus(Duration.ofHours(1)));
        assertThat(decide(newcomer, stale, UNKNOWN, complete(), AFTER_TTL)).as("nor with its reserver unknown")
                .isEqualTo(new LeaseRules.Undecided(UNKNOWN, Optional.empty()));
    }

    @Test
    void aGrantFromAReservationWhoseHolderIsDeadBelongsToItsTokensCarriers() {
        LeaseRecord handedOff = new LeaseRecord("build", 7, LeaseRecord.State.HELD, HOLDER, HOLDER, NOW, NOW,
                Duration.ofSeconds(30), Optional.empty(), Optional.of(Records.digest(TOKEN)),
                java.util.OptionalLong.of(1000), Optional.of("token"), Optional.of("400"), Optional.empty());
        LeaseRules.Request newcomer = LeaseRules.Request.acquire(NEWCOMER);
        assertThat(decide(newcomer, handedOff, DEAD, null, NEVER)).as("its re-forked child may still write")
                .isEqualTo(LeaseRules.Need.SCAN);
        ProcessInfo reforked = process(301, 1, "460");
        assertThat(decide(newcomer, handedOff, DEAD, complete(reforked), NEVER)).isEqualTo(new LeaseRules.Adopt(reforked));
        assertThat(decide(newcomer, handedOff, DEAD, EnvironmentScan.incomplete("hidepid"), NEVER))
                .isEqualTo(new LeaseRules.Undecided(DEAD, Optional.empty()));
        assertThat(decide(newcomer, handedOff, DEAD, complete(), NEVER)).isInstanceOf(LeaseRules.Grant.class);
        assertThat(decide(newcomer, handedOff, ALIVE, null, NEVER)).isEqualTo(new LeaseRules.Held(ALIVE));
        assertThat(decide(newcomer, held(), DEAD, null, NEVER)).as("a plain acquire has no token: no scan")
                .isInstanceOf(LeaseRules.Grant.class);
    }

    @Test
    void aReserverOfAnEarlierBootTookItsCarriersWithItNoScanIsMade() {
        Verdict rebooted = Verdict.of(Reason.REBOOTED, "");
        assertThat(decide(LeaseRules.Request.acquire(NEWCOMER), reserved(), rebooted, null, NEVER))
                .isEqualTo(new LeaseRules.Grant(Optional.of(new LeaseRecord.Takeover(7, HOLDER, rebooted, NOW, Optional.of(NOW)))));
    }

    @Test
    void aFloorIsATimeOfThisBootInTheFormItsPlatformWrites() {
        assertThat(LeaseRules.floorWithin("400", "500")).isTrue();
        assertThat(LeaseRules.floorWithin("500", "500")).isTrue();
        assertThat(LeaseRules.floorWithin("99999999999999", "500")).as("after now: no process could start after it").isFalse();
        assertThat(LeaseRules.floorWithin("1.5", "500")).as("not ticks").isFalse();
        assertThat(LeaseRules.floorWithin("1733047200.000123", "1733047300.000000")).isTrue();
        assertThat(LeaseRules.floorWithin("400", "1733047300.000000")).as("ticks where seconds are kept").isFalse();
        assertThat(LeaseRules.floorWithin("abc", "500")).isFalse();
    }

    @Test
    void theCarrierAdoptedIsTheOneTheLauncherStartedTheOldestIfSeveral() {
        ProcessInfo child = process(300, 100, "450");
        ProcessInfo grandchild = process(301, 300, "451");
        ProcessInfo greatGrandchild = process(302, 301, "452");
        assertThat(LeaseRules.firstCarrier(List.of(greatGrandchild, grandchild, child))).contains(child);
        ProcessInfo orphanedGrandchild = process(305, 1, "460"); // its parent, the child, exited
        assertThat(LeaseRules.firstCarrier(List.of(orphanedGrandchild, greatGrandchild, grandchild))).as("the oldest root")
                .contains(grandchild);
        ProcessInfo late = process(299, 1, "470");
        assertThat(LeaseRules.firstCarrier(List.of(late, orphanedGrandchild))).contains(orphanedGrandchild);
        ProcessInfo macos = process(400, 1, "1733047200.000123");
        ProcessInfo macosLater = process(401, 1, "1733047200.1");
        assertThat(LeaseRules.firstCarrier(List.of(macosLater, macos))).as("seconds.micros compare as numbers").contains(macos);
        assertThat(LeaseRules.firstCarrier(List.of())).isEmpty();
    }

    /**
     * A grant whose command started in a cgroup of its own and whose token was retired at the
     * hand-off (its environment was read without it, e.g. between the two halves of an exec): a DEAD
     * holder is not the end while the cgroup may hold what it left, a daemon that blanked its
     * environment too. Its members are asked, and one found holds the lease.
     */
    @Test
    void aDeadHoldersGrantInACgroupWithoutATokenAsksTheCgroupFirst() {
        LeaseRecord inCgroup = new LeaseRecord("build", 7, LeaseRecord.State.HELD, HOLDER, HOLDER, NOW, NOW,
                Duration.ofSeconds(30), Optional.empty(), Optional.empty(), java.util.OptionalLong.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.of("/cg/proclive.build.s.1"), Optional.of("1:2"));
        LeaseRules.Request newcomer = LeaseRules.Request.acquire(NEWCOMER);
        assertThat(decide(newcomer, inCgroup, DEAD, null, NEVER)).isEqualTo(LeaseRules.Need.SCAN);
        ProcessInfo daemon = process(300, 1, "700");
        assertThat(decide(newcomer, inCgroup, DEAD, complete(daemon), NEVER)).isEqualTo(new LeaseRules.Adopt(daemon));
        assertThat(decide(newcomer, inCgroup, DEAD, complete(), NEVER)).isInstanceOf(LeaseRules.Grant.class);
        assertThat(decide(newcomer, inCgroup, ALIVE, null, NEVER)).isInstanceOf(LeaseRules.Held.class);
        assertThat(decide(newcomer, held(), DEAD, null, NEVER)).as("no token, no cgroup: its holder's death ends it")
                .isInstanceOf(LeaseRules.Grant.class);
    }
}
