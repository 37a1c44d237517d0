package dev.proclive.lease.core;

import java.time.Duration;
import dev.proclive.spi.internal.Elapsed;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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
     * Real time: {@link Object#wait(long)} woken by the future, and {@link Thread#sleep(long)}, each a
     * relative wait of at most {@value #SLICE_MS} ms, the whole bounded by {@link Elapsed} — never a
     * timed {@code get}, whose deadline on {@code nanoTime} a clock stepped back (as {@code libfaketime}
     * steps it) would stretch by the step.
     */
    Pause REAL = new Pause() {
        @Override
        public void await(CompletableFuture<?> end, Duration most) throws InterruptedException {
            Elapsed waited = Elapsed.bounded(most);
            Object woken = new Object();
            end.whenComplete((v, e) -> {
                synchronized (woken) {
                    woken.notifyAll();
                }
            });
            synchronized (woken) {
                long left;
                while (!end.isDone() && (left = waited.leftNanos()) > 0) {
                    woken.wait(Math.max(1, Math.min(SLICE_MS, TimeUnit.NANOSECONDS.toMillis(left))));
                }
            }
        }

        @Override
        public void sleep(Duration d) throws InterruptedException {
            Elapsed waited = Elapsed.bounded(d);
            long left;
            while ((left = waited.leftNanos()) > 0) {
                Thread.sleep(Math.max(1, Math.min(SLICE_MS, TimeUnit.NANOSECONDS.toMillis(left))));
            }
        }
    };

    /** The longest single relative wait of {@link #REAL}. */
    long SLICE_MS = 250;
}
