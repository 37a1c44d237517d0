package dev.proclive.spi;

import dev.proclive.spi.internal.EnvironmentScan;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A scan as a proof: passes while processes end under it, a bounded number of times. */
class EnvironmentScanTest {

    static final ProcessInfo CARRIER = new ProcessInfo(70, 1, "child", "500", ProcessState.LIVE);

    @Test
    void aConclusivePassEndsTheScan() {
        List<Integer> passes = new ArrayList<>();
        EnvironmentScan scan = EnvironmentScan.asProof(zombies -> {
            passes.add(passes.size());
            return passes.size() < 2 ? new EnvironmentScan(List.of(), false, "pid 9 ended during the pass", true)
                    : new EnvironmentScan(List.of(CARRIER), true, "");
        });
        assertThat(passes).hasSize(2);
        assertThat(scan.complete()).isTrue();
        assertThat(scan.carriers()).containsExactly(CARRIER);
    }

    @Test
    void anIncompleteScanForGoodIsNotPassedAgain() {
        int[] passes = {0};
        EnvironmentScan scan = EnvironmentScan.asProof(zombies -> {
            passes[0]++;
            return EnvironmentScan.incomplete("pid 9: not readable");
        });
        assertThat(passes[0]).isEqualTo(1);
        assertThat(scan.passAgain()).isFalse();
    }

    @Test
    void passesThatKeepMeetingEndsAreIncompleteAfterTheirBound() {
        int[] passes = {0};
        EnvironmentScan scan = EnvironmentScan.asProof(zombies -> {
            passes[0]++;
            return new EnvironmentScan(List.of(), false, "pid " + passes[0] + " ended during the pass", true);
        });
        assertThat(passes[0]).isEqualTo(EnvironmentScan.PASSES);
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).isTrue();
        assertThat(scan.detail()).isEqualTo("pid 4 ended during the pass, in each of 4 passes");
    }

    @Test
    void theZombiesMetAreKeptFromPassToPass() {
        List<Set<String>> seen = new ArrayList<>();
        EnvironmentScan.asProof(zombies -> {
            seen.add(Set.copyOf(zombies));
            return zombies.add("81:8000") ? new EnvironmentScan(List.of(), false, "pid 81 ended during the pass", true)
                    : new EnvironmentScan(List.of(), true, "");
        });
        assertThat(seen).containsExactly(Set.of(), Set.of("81:8000"));
    }
}
