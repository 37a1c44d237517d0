package dev.proclive.lease;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link LeaseStore} treats a holder whose liveness cannot be proven (UNKNOWN: another host,
 * another PID namespace, a {@code /proc} that hides it), and how long a holder promises to renew.
 *
 * <pre>{@code
 * LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofMinutes(2)).takeUnknownAfterTtl(true).build();
 * }</pre>
 *
 * <p>{@link #defaults()}: a TTL of 30 seconds, a lease held by an UNKNOWN holder is never taken
 * over (UNKNOWN means "could not prove it", and taking a live writer's lease is the worse mistake),
 * and a {@linkplain LeaseStore#spawn spawned} command's descendants are tracked by the kernel.
 *
 * <p>The TTL is written into every record a grant writes, and each record is judged by its own. A
 * renewal keeps the TTL its record has (the one the holder promised when it took the lease) unless
 * this policy's TTL was {@linkplain Builder#ttl set explicitly}: a store opened with the defaults
 * never shortens a promise another store made. Immutable and thread-safe.
 */
public final class LeasePolicy {

    private static final Duration DEFAULT_TTL = Duration.ofSeconds(30);
    private static final LeasePolicy DEFAULTS = new LeasePolicy(DEFAULT_TTL, false, false, true);

    private final Duration ttl;
    private final boolean takeUnknownAfterTtl;
    private final boolean ttlGiven;
    private final boolean trackDescendants;

    private LeasePolicy(Duration ttl, boolean takeUnknownAfterTtl, boolean ttlGiven, boolean trackDescendants) {
        this.ttl = ttl;
        this.takeUnknownAfterTtl = takeUnknownAfterTtl;
        this.ttlGiven = ttlGiven;
        this.trackDescendants = trackDescendants;
    }

    /** A TTL of 30 seconds; UNKNOWN holders are never taken over; a spawned command's descendants tracked. */
    public static LeasePolicy defaults() {
        return DEFAULTS;
    }

    /** A builder starting from {@link #defaults()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** How long a grant is promised to stay fresh after it was granted or renewed. */
    public Duration ttl() {
        return ttl;
    }

    /**
     * Whether a lease whose holder is UNKNOWN may be taken over once its record's
     * {@code renewedAt + ttl} has passed.
     */
    public boolean takeUnknownAfterTtl() {
        return takeUnknownAfterTtl;
    }

    /** The TTL a renewal writes: present only when it was set explicitly; else a renewal keeps the record's. */
    public Optional<Duration> renewalTtl() {
        return ttlGiven ? Optional.of(ttl) : Optional.empty();
    }

    /**
     * Whether {@link LeaseStore#spawn} lets the kernel track what the command starts: see
     * {@link Builder#trackDescendants}.
     */
    public boolean trackDescendants() {
        return trackDescendants;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LeasePolicy p && p.ttl.equals(ttl) && p.takeUnknownAfterTtl == takeUnknownAfterTtl
                && p.ttlGiven == ttlGiven && p.trackDescendants == trackDescendants;
    }

    @Override
    public int hashCode() {
        return Objects.hash(ttl, takeUnknownAfterTtl, ttlGiven, trackDescendants);
    }

    @Override
    public String toString() {
        return "LeasePolicy[ttl=" + ttl + (ttlGiven ? "" : " (default)") + ", takeUnknownAfterTtl="
                + takeUnknownAfterTtl + (trackDescendants ? "" : ", untracked") + "]";
    }

    /** Configures a {@link LeasePolicy}. Not thread-safe. */
    public static final class Builder {
        private Duration ttl = DEFAULT_TTL;
        private boolean ttlGiven;
        private boolean takeUnknownAfterTtl;
        private boolean trackDescendants = true;

        private Builder() {
        }

        /** How long a grant or renewal stays fresh (positive, whole milliseconds). */
        public Builder ttl(Duration ttl) {
            this.ttl = Objects.requireNonNull(ttl, "ttl");
            this.ttlGiven = true;
            return this;
        }

        /** Whether an UNKNOWN holder's lease may be taken over once it was not renewed for its TTL. */
        public Builder takeUnknownAfterTtl(boolean take) {
            this.takeUnknownAfterTtl = take;
            return this;
        }

        /**
         * Whether a {@linkplain LeaseStore#spawn spawned} command's descendants are tracked by the
         * kernel (on by default), so that its end is recorded at once, whatever else runs on the
         * machine and whatever a daemon it leaves does to its environment. Without it, the end of a
         * command that may have left a process behind is proven by a scan of every process's
         * environment for its token, which a busy machine (a build beside it) can keep undecided.
         *
         * <p>What it changes for the application, on Linux: this JVM becomes a child subreaper
         * ({@code PR_SET_CHILD_SUBREAPER}) at its first spawn, for the rest of its life. What any
         * process this JVM started leaves behind when it exits is re-parented to this JVM instead of
         * init, and a daemon thread ({@code proclive-subreaper}) reaps those that end, every 100 ms;
         * {@code ProcessHandle.current().children()} lists them, and a process this JVM starts from
         * its main thread would count as a command's. Where the cgroup v2 hierarchy is writable
         * (root, a delegated subtree), the command also starts in a new cgroup of its own, named in
         * the record, whose members every reader can see, also after this JVM is gone: the command
         * is started through {@code /bin/sh}, which moves itself into the cgroup and then becomes
         * the command (same pid, same environment); this JVM itself never moves. Elsewhere (macOS,
         * Windows) nothing changes: the token scan proves what it can.
         *
         * @param track false to opt out: the JVM is never made a subreaper and no cgroup is made
         */
        public Builder trackDescendants(boolean track) {
            this.trackDescendants = track;
            return this;
        }

        /**
         * The policy.
         *
         * @throws IllegalArgumentException if the TTL is not positive or not whole milliseconds
         */
        public LeasePolicy build() {
            if (ttl.isNegative() || ttl.isZero()) {
                throw new IllegalArgumentException("ttl must be positive, got " + ttl);
            }
            if (ttl.toNanos() % 1_000_000 != 0) {
                throw new IllegalArgumentException("ttl is kept in whole milliseconds, got " + ttl);
            }
            return new LeasePolicy(ttl, takeUnknownAfterTtl, ttlGiven, trackDescendants);
        }
    }
}
