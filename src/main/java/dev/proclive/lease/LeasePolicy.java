package dev.proclive.lease;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How a {@link LeaseStore} treats a holder whose liveness cannot be proven (UNKNOWN: another host, another PID
 * namespace, a {@code /proc} that hides it), and how long a holder promises to renew.
 *
 * <pre>{@code
 * LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofMinutes(2)).takeUnknownAfterTtl(true).build();
 * }</pre>
 *
 * <p>By {@link #defaults()} an UNKNOWN holder's lease is never taken over: UNKNOWN means "could not prove it", and
 * taking a live writer's lease is the worse mistake. The TTL is written into every record a grant writes, and each
 * record is judged by its own. A renewal keeps its record's TTL unless this policy's was
 * {@linkplain #ttl(Duration) set explicitly}: a store opened with the defaults never shortens a promise another store
 * made.
 *
 * <p>Immutable and thread-safe: each setting returns a copy with that setting changed.
 */
public final class LeasePolicy {

    private static final Duration DEFAULT_TTL = Duration.ofSeconds(30);
    /** The command line's nine digits of seconds: sums of a TTL in nanoseconds stay far from overflowing. */
    private static final Duration MAX_TTL = Duration.ofSeconds(999_999_999);
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

    /** {@link #defaults()}, where a chain starts: {@code LeasePolicy.builder().ttl(Duration.ofMinutes(2)).build()}. */
    public static LeasePolicy builder() {
        return DEFAULTS;
    }

    /**
     * A copy with a grant or renewal fresh for {@code ttl}, set explicitly: renewals write it ({@link #renewalTtl()}).
     *
     * @param ttl positive, whole milliseconds, at most 999,999,999 seconds (about 31 years)
     * @throws NullPointerException     if {@code ttl} is null
     * @throws IllegalArgumentException if the TTL is not positive, not whole milliseconds or longer than that
     */
    public LeasePolicy ttl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
        if (ttl.compareTo(MAX_TTL) > 0) {
            throw new IllegalArgumentException("ttl must be at most 999999999 s (about 31 years), got " + ttl);
        }
        if (ttl.toNanos() % 1_000_000 != 0) {
            throw new IllegalArgumentException("ttl is kept in whole milliseconds, got " + ttl);
        }
        return new LeasePolicy(ttl, takeUnknownAfterTtl, true, trackDescendants);
    }

    /** A copy that does (or does not) take over an UNKNOWN holder's lease once it was not kept for its TTL. */
    public LeasePolicy takeUnknownAfterTtl(boolean take) {
        return new LeasePolicy(ttl, take, ttlGiven, trackDescendants);
    }

    /**
     * A copy in which a {@linkplain LeaseStore#spawn spawned} command's descendants are (or are not) tracked by the
     * kernel: on by default, so a command's end is recorded at once whatever else runs on the machine and whatever a
     * daemon it leaves does to its environment. Once this JVM is gone, that end is proven by the command's cgroup, if
     * any, and a scan of every process's environment for its token; without tracking, by the scan alone, also while
     * this JVM lives. A busy machine (a build beside it) can keep a scan undecided.
     *
     * <p>On Linux this JVM becomes a child subreaper ({@code PR_SET_CHILD_SUBREAPER}) at its first spawn, for the rest
     * of its life: what any process it started leaves behind is re-parented to it, not init, and reaped when it ends;
     * {@code ProcessHandle.current().children()} lists them, and a process this JVM starts from its main thread would
     * count as a command's. Where the cgroup v2 hierarchy is writable (root, a delegated subtree), the command starts
     * in a cgroup of its own, named in the record for every reader: through {@code /bin/sh}, which moves itself into
     * the cgroup and becomes the command (same pid, same environment); this JVM never moves. On macOS and
     * Windows nothing changes.
     *
     * @param track false to opt out: the JVM is never made a subreaper and no cgroup is made
     */
    public LeasePolicy trackDescendants(boolean track) {
        return new LeasePolicy(ttl, takeUnknownAfterTtl, ttlGiven, track);
    }

    /** This policy: where a chain of settings ends. */
    public LeasePolicy build() {
        return this;
    }

    /** How long a grant is promised to stay fresh after it was granted or renewed. */
    public Duration ttl() {
        return ttl;
    }

    /** Whether a lease whose holder is UNKNOWN may be taken over once its {@code renewedAt + ttl} has passed. */
    public boolean takeUnknownAfterTtl() {
        return takeUnknownAfterTtl;
    }

    /** The TTL a renewal writes: present only when it was set explicitly; else a renewal keeps the record's. */
    public Optional<Duration> renewalTtl() {
        return ttlGiven ? Optional.of(ttl) : Optional.empty();
    }

    /** Whether {@link LeaseStore#spawn} lets the kernel track what the command starts. */
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
}
