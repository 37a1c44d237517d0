package dev.proclive.lease;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link LeaseStore} treats a holder whose liveness cannot be proven (UNKNOWN: another host,
 * another PID namespace, a {@code /proc} that hides it), and how long a holder promises to renew.
 *
 * <pre>{@code
 * LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofMinutes(2)).takeUnknownAfterTtl(true).build();
 * }</pre>
 *
 * <p>{@link #defaults()}: a TTL of 30 seconds, and a lease held by an UNKNOWN holder is never taken
 * over: UNKNOWN means "could not prove it", and taking a live writer's lease is the worse mistake.
 * Immutable and thread-safe.
 *
 * @param ttl                 how long a grant or renewal is promised to stay fresh; written into each
 *                            record the store writes, and judged by the record's own value
 * @param takeUnknownAfterTtl whether a lease whose holder is UNKNOWN may be taken over once its
 *                            record's {@code renewedAt + ttl} has passed
 */
public record LeasePolicy(Duration ttl, boolean takeUnknownAfterTtl) {

    private static final LeasePolicy DEFAULTS = new LeasePolicy(Duration.ofSeconds(30), false);

    /**
     * @throws NullPointerException     if {@code ttl} is null
     * @throws IllegalArgumentException if {@code ttl} is not positive or has a fraction of a millisecond
     */
    public LeasePolicy {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
        if (ttl.toNanos() % 1_000_000 != 0) {
            throw new IllegalArgumentException("ttl is kept in whole milliseconds, got " + ttl);
        }
    }

    /** A TTL of 30 seconds; UNKNOWN holders are never taken over. */
    public static LeasePolicy defaults() {
        return DEFAULTS;
    }

    /** A builder starting from {@link #defaults()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link LeasePolicy}. Not thread-safe. */
    public static final class Builder {
        private Duration ttl = DEFAULTS.ttl();
        private boolean takeUnknownAfterTtl = DEFAULTS.takeUnknownAfterTtl();

        private Builder() {
        }

        /** How long a grant or renewal stays fresh (positive, whole milliseconds). */
        public Builder ttl(Duration ttl) {
            this.ttl = Objects.requireNonNull(ttl, "ttl");
            return this;
        }

        /** Whether an UNKNOWN holder's lease may be taken over once it was not renewed for its TTL. */
        public Builder takeUnknownAfterTtl(boolean take) {
            this.takeUnknownAfterTtl = take;
            return this;
        }

        /**
         * The policy.
         *
         * @throws IllegalArgumentException if the TTL is not positive or not whole milliseconds
         */
        public LeasePolicy build() {
            return new LeasePolicy(ttl, takeUnknownAfterTtl);
        }
    }
}
