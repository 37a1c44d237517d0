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
import java.util.concurrent.ForkJoinPool;
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
     * being told; then on the JDK's common pool, whose few threads (one fewer than the cores) an
     * application's own work, or the first blocking callbacks, could all hold.
     */
    @Test
    void aLossCallbackThatBlocksHoldsUpNoOtherLeasesLoss() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        CountDownLatch stepDown = new CountDownLatch(1);
        List<CompletableFuture<LeaseLost>> told = new ArrayList<>();
        List<String> threads = java.util.Collections.synchronizedList(new ArrayList<>());
        // The JDK's pool (3 or more cores) busy with work of the application's: losses were told on it too
        for (int i = 0; i < ForkJoinPool.getCommonPoolParallelism(); i++) {
            ForkJoinPool.commonPool().execute(() -> {
                try {
                    stepDown.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        try {
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
                    told.add(lease.lost().whenComplete((l, e) -> threads.add(Thread.currentThread().getName())));
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
                    assertThat(threads).hasSize(4).allMatch(t -> t.equals("proclive-lease-told"));
                } finally {
                    stepDown.countDown();
                }
            }
        } finally {
            stepDown.countDown(); // the blocked common-pool tasks too, whatever failed
        }
    }
}
