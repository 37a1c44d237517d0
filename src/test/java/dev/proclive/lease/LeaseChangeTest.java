package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Reason;
import dev.proclive.Verdict;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** One vocabulary for what happened to a grant: what a record's end, a loss and an event may say. */
class LeaseChangeTest {

    private static final Verdict DEAD = new Verdict(Reason.EXITED, "exited");

    @Test
    void aRecordEndsOnlyReleasedBrokenExitedOrSpawnFailed() {
        EnumSet<LeaseChange> ends = EnumSet.noneOf(LeaseChange.class);
        for (LeaseChange c : LeaseChange.values()) {
            try {
                new LeaseRecord.Ending(c, Instant.EPOCH, DEAD, OptionalLong.empty());
                ends.add(c);
            } catch (IllegalArgumentException refused) {
                assertThat(refused).hasMessageContaining(c.json());
            }
        }
        assertThat(ends).containsExactlyInAnyOrder(LeaseChange.RELEASED, LeaseChange.BROKEN, LeaseChange.EXITED,
                LeaseChange.SPAWN_FAILED);
    }

    @Test
    void aGrantIsNotLostByBeingGranted() {
        assertThatThrownBy(() -> new LeaseLost(LeaseChange.GRANTED, Optional.empty(), "x"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new LeaseLost(LeaseChange.BROKEN, Optional.empty(), "x").why()).isEqualTo(LeaseChange.BROKEN);
    }

    @Test
    void theWordsAreTheNamesInLowerCase() {
        assertThat(LeaseChange.SPAWN_FAILED.json()).isEqualTo("spawn_failed");
        assertThat(LeaseChange.TAKEN_OVER.json()).isEqualTo("taken_over");
    }
}
