package dev.proclive.lease.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How a wait waits: for a future (a holder's exit) or for a while, at most {@code most}. The
 * seam that lets wait rules be tested without sleeping, beside the store's {@link Clock}.
 */
public interface Pause {
    /** Waits until {@code end} completes or {@code most} has passed. */
    void await(CompletableFuture<?> end, Duration most) throws InterruptedException;

    /** Waits {@code d}. */
    void sleep(Duration d) throws InterruptedException;

    /** Waits {@code d}, or until {@code wake} completes (a record that changed). */
    default void sleep(Duration d, CompletableFuture<?> wake) throws InterruptedException {
        await(wake, d);
    }

    /** Real time: {@link CompletableFuture#get(long, TimeUnit)} and {@link Thread#sleep(long)}. */
    Pause REAL = new Pause() {
        @Override
        public void await(CompletableFuture<?> end, Duration most) throws InterruptedException {
            try {
                end.get(Math.max(1, most.toMillis()), TimeUnit.MILLISECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // the deadline, or a watch that failed: judge again either way
            }
        }

        @Override
        public void sleep(Duration d) throws InterruptedException {
            Thread.sleep(Math.max(1, d.toMillis()));
        }
    };
}
