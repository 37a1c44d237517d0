package dev.proclive.spi.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Time passed since it was made, for bounding a wait: read from a monotonic clock
 * ({@link System#nanoTime()} unless another is given) and counted only forward. A clock seen going
 * back — {@code libfaketime} fakes the monotonic clock with the wall clock, so a wall clock stepped
 * back an hour takes {@code nanoTime} back an hour too — adds nothing, so no step of any clock
 * stretches a wait; a step forward may only shorten one. Not safe for use by several threads.
 */
public final class Elapsed {

    private final LongSupplier nanos;
    private final long bound;
    private long last;
    private long passed;

    private Elapsed(LongSupplier nanos, Duration bound) {
        this.nanos = nanos;
        this.bound = bound.isNegative() ? 0 : bound.toNanos();
        this.last = nanos.getAsLong();
    }

    /** A wait of at most {@code bound}, from now, on {@link System#nanoTime()}. */
    public static Elapsed bounded(Duration bound) {
        return new Elapsed(System::nanoTime, bound);
    }

    /** A wait of at most {@code bound}, from now, on {@code nanos} (a monotonic clock in nanoseconds). */
    public static Elapsed bounded(Duration bound, LongSupplier nanos) {
        return new Elapsed(nanos, bound);
    }

    /** How much of the bound is left now: zero or less once it has passed. */
    public Duration left() {
        return Duration.ofNanos(leftNanos());
    }

    /** {@link #left()} in nanoseconds. */
    public long leftNanos() {
        long now = nanos.getAsLong();
        long step = now - last;
        last = now;
        if (step > 0) {
            passed += step;
        }
        return bound - passed;
    }

    /** Whether the bound has passed. */
    public boolean over() {
        return leftNanos() <= 0;
    }

    /** The longest single relative wait of {@link #await}. */
    private static final long SLICE_MS = 250;

    /**
     * Waits until {@code end} completes or {@code most} has passed, counted as {@link Elapsed}
     * counts: {@link Object#wait(long)} slices of at most {@value #SLICE_MS} ms, woken by the
     * future — never a timed {@code get}, whose deadline on {@code nanoTime} a clock stepped back
     * would stretch by the step.
     *
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    public static void await(CompletableFuture<?> end, Duration most) throws InterruptedException {
        Elapsed waited = bounded(most);
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

    /** Sleeps {@code d}, counted as {@link Elapsed} counts, in slices of at most {@value #SLICE_MS} ms. */
    public static void sleep(Duration d) throws InterruptedException {
        Elapsed waited = bounded(d);
        long left;
        while ((left = waited.leftNanos()) > 0) {
            Thread.sleep(Math.max(1, Math.min(SLICE_MS, TimeUnit.NANOSECONDS.toMillis(left))));
        }
    }
}
