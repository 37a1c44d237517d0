package dev.proclive.lease.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseEvent;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Records;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The session's two pure rules, without files or processes: what a watch says happened between two
 * reads of a record ({@link RecordWatches#between}), and why a grant is lost ({@link Losses#of}).
 */
class SessionRulesTest {

    static final Instant T = Instant.parse("2026-12-02T10:00:00Z");
    static final Identity A = new Identity(100, "500", "b", "h", "a", "ns");
    static final Identity B = new Identity(200, "600", "b", "h", "b", "ns");

    static LeaseRecord held(long fence, Identity holder) {
        return new LeaseRecord("build", fence, LeaseRecord.State.HELD, holder, holder, T, T, Duration.ofSeconds(30),
                Optional.empty(), Optional.empty(), OptionalLong.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    }

    static LeaseRecord ended(LeaseRecord r, LeaseChange how) {
        return Records.ended(r, r.holder(), new LeaseRecord.Ending(how, T.plusSeconds(1), Verdict.of(Reason.MATCHED, ""),
                how == LeaseChange.EXITED ? OptionalLong.of(3) : OptionalLong.empty()));
    }

    static LeaseRecord takenOver(LeaseRecord from, long fence, Identity by) {
        LeaseRecord.Takeover t = new LeaseRecord.Takeover(from.fence(), from.holder(), Verdict.of(Reason.EXITED, ""),
                T.plusSeconds(2), Optional.of(from.renewedAt()));
        return new LeaseRecord("build", fence, LeaseRecord.State.HELD, by, by, T, T, Duration.ofSeconds(30), Optional.of(t),
                Optional.empty(), OptionalLong.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    }

    static List<LeaseChange> kinds(Optional<LeaseRecord> before, Optional<LeaseRecord> after) {
        return RecordWatches.between(before, after).stream().map(LeaseEvent::kind).toList();
    }

    @Test
    void aGrantThenItsEndAreToldOnceEach() {
        LeaseRecord one = held(1, A);
        assertThat(kinds(Optional.empty(), Optional.of(one))).containsExactly(LeaseChange.GRANTED);
        assertThat(kinds(Optional.of(one), Optional.of(ended(one, LeaseChange.RELEASED))))
                .containsExactly(LeaseChange.RELEASED);
        assertThat(kinds(Optional.of(one), Optional.of(ended(one, LeaseChange.BROKEN))))
                .containsExactly(LeaseChange.BROKEN);
        assertThat(kinds(Optional.of(one), Optional.of(ended(one, LeaseChange.EXITED))))
                .containsExactly(LeaseChange.EXITED);
        assertThat(kinds(Optional.of(one), Optional.of(ended(one, LeaseChange.SPAWN_FAILED))))
                .containsExactly(LeaseChange.EXITED);
        LeaseRecord gone = ended(one, LeaseChange.RELEASED);
        assertThat(kinds(Optional.of(gone), Optional.of(gone))).as("nothing new").isEmpty();
    }

    @Test
    void aRenewalIsNoEventAndAHandOffIsAGrant() {
        LeaseRecord one = held(1, A);
        assertThat(kinds(Optional.of(one), Optional.of(Records.renewed(one, A, T.plusSeconds(10), one.ttl())))).isEmpty();
        LeaseEvent handed = RecordWatches.between(Optional.of(one),
                Optional.of(Records.handedTo(one, LeaseRecord.State.HELD, B, A, one.renewedAt(), one.ttl()))).get(0);
        assertThat(handed.kind()).isEqualTo(LeaseChange.GRANTED);
        assertThat(handed.previous()).contains(one);
    }

    @Test
    void aTakeoverOverTheGrantSeenIsToldAsOne() {
        LeaseRecord one = held(1, A);
        LeaseEvent e = RecordWatches.between(Optional.of(one), Optional.of(takenOver(one, 2, B))).get(0);
        assertThat(e.kind()).isEqualTo(LeaseChange.TAKEN_OVER);
        assertThat(e.record().holder()).isEqualTo(B);
        assertThat(e.previous()).contains(one);
        assertThat(kinds(Optional.of(ended(one, LeaseChange.RELEASED)), Optional.of(held(2, B))))
                .as("a new grant after an end").containsExactly(LeaseChange.GRANTED);
    }

    @Test
    void aGrantThatCameAndWentBetweenTwoReadsIsToldAsGrantedThenItsEnd() {
        LeaseRecord one = ended(held(1, A), LeaseChange.RELEASED);
        LeaseRecord two = ended(held(2, B), LeaseChange.RELEASED);
        assertThat(kinds(Optional.of(one), Optional.of(two)))
                .containsExactly(LeaseChange.GRANTED, LeaseChange.RELEASED);
        assertThat(kinds(Optional.empty(), Optional.of(two)))
                .containsExactly(LeaseChange.GRANTED, LeaseChange.RELEASED);
    }

    @Test
    void aGrantedRecordThatIsGoneExpiredAndAnEndedOneThatIsGoneSaysNothing() {
        LeaseRecord one = held(1, A);
        LeaseEvent e = RecordWatches.between(Optional.of(one), Optional.empty()).get(0);
        assertThat(e.kind()).isEqualTo(LeaseChange.EXPIRED);
        assertThat(e.record()).isEqualTo(one);
        assertThat(kinds(Optional.of(ended(one, LeaseChange.RELEASED)), Optional.empty())).isEmpty();
        assertThat(kinds(Optional.empty(), Optional.empty())).isEmpty();
    }

    static LeaseChange why(LeaseRecord now, boolean expires) {
        return Losses.of(1, Optional.of(A), Optional.ofNullable(now), expires).orElseThrow().why();
    }

    @Test
    void aLossSaysWhatTheRecordShows() {
        LeaseRecord one = held(1, A);
        assertThat(Losses.of(1, Optional.of(A), Optional.of(one), false)).as("still held").isEmpty();
        assertThat(Losses.of(1, Optional.of(A), Optional.of(Records.renewed(one, A, T.plusSeconds(5), one.ttl())), false))
                .as("renewed").isEmpty();
        assertThat(why(null, false)).isEqualTo(LeaseChange.REMOVED);
        assertThat(why(null, true)).isEqualTo(LeaseChange.EXPIRED);
        assertThat(why(ended(one, LeaseChange.BROKEN), false)).isEqualTo(LeaseChange.BROKEN);
        assertThat(why(ended(one, LeaseChange.RELEASED), false)).isEqualTo(LeaseChange.REMOVED);
        assertThat(why(ended(one, LeaseChange.EXITED), false)).isEqualTo(LeaseChange.HOLDER_DIED);
        assertThat(why(ended(one, LeaseChange.SPAWN_FAILED), false)).isEqualTo(LeaseChange.HOLDER_DIED);
        assertThat(why(takenOver(one, 2, B), false)).isEqualTo(LeaseChange.TAKEN_OVER);
        assertThat(why(held(5, B), false)).as("a later grant").isEqualTo(LeaseChange.TAKEN_OVER);
        assertThat(why(Records.handedTo(one, LeaseRecord.State.HELD, B, B, one.renewedAt(), one.ttl()), false))
                .as("handed to another at its fence").isEqualTo(LeaseChange.TAKEN_OVER);
        assertThat(Losses.of(3, Optional.of(A), Optional.of(held(2, B)), false).orElseThrow().why())
                .as("a record below the fence").isEqualTo(LeaseChange.REMOVED);
        LeaseRecord reserved = Records.handedTo(one, LeaseRecord.State.RESERVED, A, A, one.renewedAt(), one.ttl());
        assertThat(why(reserved, false)).as("a reservation admits no write").isEqualTo(LeaseChange.UNCONFIRMED);
        assertThat(Losses.of(1, Optional.of(A), Optional.of(ended(one, LeaseChange.BROKEN)), false).orElseThrow()
                .detail()).contains("fence 1 of pid 100", "broken by an operator");
        assertThat(Losses.of(1, Optional.of(A), Optional.of(takenOver(one, 2, B)), false).orElseThrow().detail())
                .isEqualTo("fence 1 of pid 100 was taken over by pid 200 at fence 2 because its holder was dead (exited)");
        assertThat(Losses.of(1, Optional.of(A), Optional.of(ended(one, LeaseChange.EXITED)), false).orElseThrow()
                .detail()).startsWith("fence 1 of pid 100 ended as exited at ").endsWith(", status 3");
        assertThat(Losses.of(1, Optional.of(A), Optional.of(takenOver(held(4, B), 5, A)), false).orElseThrow().detail())
                .as("taken over from another grant: not said as this one's takeover")
                .isEqualTo("fence 1 of pid 100 is no longer the record's: it is held at fence 5 for pid 100");
        assertThat(Losses.of(1, Optional.of(A), Optional.of(Records.released(one, B)), false).orElseThrow())
                .as("released with no word of how: not said as handed to itself")
                .isEqualTo(new LeaseLost(LeaseChange.REMOVED, Optional.of(Records.released(one, B)),
                        "fence 1 of pid 100 was released (written by pid 200)"));
        LeaseLost unconfirmed = Losses.unconfirmed(7, Optional.of(A));
        assertThat(unconfirmed.why()).isEqualTo(LeaseChange.UNCONFIRMED);
        assertThat(unconfirmed.record()).isEmpty();
        assertThat(unconfirmed.detail()).startsWith("fence 7 of pid 100 is lost: its keep-alive or its renewal was not confirmed");
        assertThat(Losses.unconfirmed(7, Optional.empty()).detail()).startsWith("fence 7 is lost: ");
        assertThat(Losses.of(1, Optional.empty(), Optional.of(held(1, B)), false)).as("any holder").isEmpty();
        LeaseRecord reservedByLauncher = Records.handedTo(held(1, B), LeaseRecord.State.RESERVED, B, B, held(1, B).renewedAt(), held(1, B).ttl());
        assertThat(Losses.of(1, Optional.of(A), Optional.of(reservedByLauncher), false))
                .as("the reservation it was handed from, read before the hand-off: no proof").isEmpty();
    }
}
