package dev.proclive;

import dev.proclive.spi.ProcessIntrospector;
import java.util.Optional;

/**
 * This host's name, read through an introspector at most about once a second: a host can be
 * renamed while a process lives, but a verdict need not read a file to learn that.
 */
final class HostName {

    /** How long a read is reused. */
    static final long TTL_NANOS = 1_000_000_000L;

    private final ProcessIntrospector introspector;
    /** What tells time: {@link System#nanoTime()}, or a test's ticker. */
    private final java.util.function.LongSupplier nanoTime;

    /**
     * The last name read and when. Two volatiles, not one pair: a reader that sees a new time with
     * the old name serves a name that was current less than a period ago.
     */
    private volatile Optional<String> name;
    private volatile long readAt;

    HostName(ProcessIntrospector introspector, java.util.function.LongSupplier nanoTime) {
        this.introspector = introspector;
        this.nanoTime = nanoTime;
    }

    Optional<String> get() {
        Optional<String> h = name;
        long now = nanoTime.getAsLong();
        if (h == null || now - readAt > TTL_NANOS) {
            h = introspector.hostName();
            readAt = now;
            name = h;
        }
        return h;
    }
}
