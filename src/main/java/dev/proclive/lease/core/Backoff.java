package dev.proclive.lease.core;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long a loop that failed waits before it tries again: {@value #FIRST_MILLIS} ms, doubling
 * with each failure in a row to {@value #MOST_MILLIS} ms, each pause changed by up to a fifth at
 * random, so that loops that failed together do not try again together. One per loop.
 */
final class Backoff {

    static final long FIRST_MILLIS = 25;
    static final long MOST_MILLIS = 1_000;

    private int failures;

    Duration next() {
        long base = Math.min(MOST_MILLIS, FIRST_MILLIS << Math.min(failures, 16));
        failures++;
        return Duration.ofMillis(base * (80 + ThreadLocalRandom.current().nextInt(41)) / 100);
    }

    /** How many failures in a row came before this success; counting starts again. */
    int succeeded() {
        int before = failures;
        failures = 0;
        return before;
    }
}
