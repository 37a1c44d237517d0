package dev.proclive.lease.core;

import java.time.Duration;
import dev.proclive.spi.internal.Elapsed;
import java.util.concurrent.CompletableFuture;

/**
 * How a wait waits: for a future (a holder's exit) or for a while, at most {@code most}, and the
 * monotonic time its deadlines are measured on. The seam that lets wait rules be tested without
 * sleeping, beside the store's {@link java.time.Clock} (which dates records, never bounds a wait).
 */
public interface Pause {
    /** Waits until {@code end} completes or {@code most} has passed. */
    void await(CompletableFuture<?> end, Duration most) throws InterruptedException;

    /** Waits {@code d}. */
    void sleep(Duration d) throws InterruptedException;

    /**
     * Monotonic time in nanoseconds, as {@link System#nanoTime()}: what every wait's deadline is
     * measured on, so that a wall clock stepped back or forward never stretches or cuts a wait.
     */
    default long nanoTime() {
        return System.nanoTime();
    }

    /** Waits {@code d}, or until {@code wake} completes (a record that changed). */
    default void sleep(Duration d, CompletableFuture<?> wake) throws InterruptedException {
        await(wake, d);
    }

    /**
     * Real time, as {@link Elapsed#await} and {@link Elapsed#sleep} wait: short relative waits, the
     * whole bounded on a monotonic clock that counts no step back (as {@code libfaketime} steps it)
     * — never a timed {@code get}, whose deadline a clock stepped back would stretch by the step.
     */
    Pause REAL = new Pause() {
        @Override
        public void await(CompletableFuture<?> end, Duration most) throws InterruptedException {
            Elapsed.await(end, most);
        }

        @Override
        public void sleep(Duration d) throws InterruptedException {
            Elapsed.sleep(d);
        }
    };
}
