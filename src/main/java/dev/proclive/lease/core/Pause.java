package dev.proclive.lease.core;

import dev.proclive.spi.internal.Elapsed;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** Waits on monotonic time (a seam: tests need no sleep); the store's {@link java.time.Clock} only dates records. */
public interface Pause {
    /** Waits until {@code end} completes or {@code most} has passed. */
    void await(CompletableFuture<?> end, Duration most) throws InterruptedException;

    void sleep(Duration d) throws InterruptedException;

    /** As {@link System#nanoTime()}: a wall clock stepped back or forward never stretches or cuts a wait. */
    default long nanoTime() {
        return System.nanoTime();
    }

    /** Never a timed {@code get}, whose deadline a clock stepped back (as {@code libfaketime} steps it) stretches. */
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
