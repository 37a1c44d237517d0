package dev.proclive.spi.internal;

import java.time.Duration;
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
}
