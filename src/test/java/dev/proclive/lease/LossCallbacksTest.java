package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LossCallbacksTest {

    @TempDir
    Path tmp;

    /**
     * What a loss's callback does is its own: one that blocks (a writer waiting for its work to
     * stop) holds up no other lease's loss. Callbacks ran on the thread that found the loss, the
     * store's one look at every kept grant, and the first that blocked kept every later loss from
     * being told.
     */
    @Test
    void aLossCallbackThatBlocksHoldsUpNoOtherLeasesLoss() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        CountDownLatch stepDown = new CountDownLatch(1);
        List<CompletableFuture<LeaseLost>> told = new ArrayList<>();
        try (LeaseStore store = LeaseStore.open(tmp)) {
            for (int i = 0; i < 4; i++) {
                Lease lease = ((Acquisition.Granted) store.acquire("build-" + i, self)).lease();
                lease.lost().thenRun(() -> {
                    try {
                        stepDown.await(); // a writer that takes its time to stop
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                told.add(lease.lost());
            }
            try (LeaseStore operator = LeaseStore.open(tmp)) {
                for (int i = 0; i < 4; i++) {
                    assertThat(operator.breakLease("build-" + i)).isPresent();
                }
            }
            try {
                for (CompletableFuture<LeaseLost> lost : told) {
                    assertThat(lost.get(Eventually.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS).why())
                            .isEqualTo(LeaseChange.BROKEN);
                }
            } finally {
                stepDown.countDown();
            }
        }
    }
}
