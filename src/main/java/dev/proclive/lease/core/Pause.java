package dev.proclive.lease.core;

import dev.proclive.spi.internal.Elapsed;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * How a wait waits, and the monotonic time its deadlines are measured on: the seam that lets wait
 * rules be tested without sleeping, beside the store's {@link java.time.Clock} (which dates
 * records, never bounds a wait).
 */
public interface Pause {
    /** Waits until {@code end} completes or {@code most} has passed. */
    void await(CompletableFuture<?> end, Duration most) throws InterruptedException;

    void sleep(Duration d) throws InterruptedException;

    /** As {@link System#nanoTime()}: a wall clock stepped back or forward never stretches or cuts a wait. */
    default long nanoTime() {
        return System.nanoTime();
    }

    /**
     * Real time: short relative waits, the whole bounded on a monotonic clock that counts no step
     * back (as {@code libfaketime} steps it) — never a timed {@code get}, whose deadline a clock
     * stepped back would stretch by the step.
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
