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
 * this policy's TTL was {@linkplain #ttl(Duration) set explicitly}: a store opened with the defaults
 * never shortens a promise another store made.
 *
 * <p>A policy is immutable and thread-safe: each setting ({@link #ttl(Duration)},
 * {@link #takeUnknownAfterTtl(boolean)}, {@link #trackDescendants(boolean)}) returns a copy with
 * that setting changed and leaves the policy it was called on as it was. {@link #builder()} (the
 * defaults) is where a chain of settings starts and {@link #build()} (the policy itself) ends it,
 * kept so that the chain reads as it always has.
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

    /**
     * {@link #defaults()}: where a chain of settings starts
     * ({@code LeasePolicy.builder().ttl(Duration.ofMinutes(2)).build()}).
     */
    public static LeasePolicy builder() {
        return DEFAULTS;
    }

    /**
     * A copy of this policy with a grant or renewal fresh for {@code ttl}, set explicitly (a renewal
     * writes it: see {@link #renewalTtl()}). This policy is unchanged.
     *
     * @param ttl positive, whole milliseconds
     * @throws NullPointerException     if {@code ttl} is null
     * @throws IllegalArgumentException if the TTL is not positive or not whole milliseconds
     */
    public LeasePolicy ttl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("ttl must be positive, got " + ttl);
        }
        if (ttl.toNanos() % 1_000_000 != 0) {
            throw new IllegalArgumentException("ttl is kept in whole milliseconds, got " + ttl);
        }
        return new LeasePolicy(ttl, takeUnknownAfterTtl, true, trackDescendants);
    }

    /**
     * A copy of this policy that does (or does not) take over an UNKNOWN holder's lease once it was
     * not kept for its TTL. This policy is unchanged.
     */
    public LeasePolicy takeUnknownAfterTtl(boolean take) {
        return new LeasePolicy(ttl, take, ttlGiven, trackDescendants);
    }

    /**
     * A copy of this policy in which a {@linkplain LeaseStore#spawn spawned} command's descendants
     * are (or are not) tracked by the kernel. This policy is unchanged.
     *
     * <p>Tracking is on by default, so that a command's end is recorded at once, whatever else runs
     * on the machine and whatever a daemon it leaves does to its environment. Without it, the end of
     * a command that may have left a process behind is proven by a scan of every process's
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
    public LeasePolicy trackDescendants(boolean track) {
        return new LeasePolicy(ttl, takeUnknownAfterTtl, ttlGiven, track);
    }

    /** This policy: where a chain of settings ends, kept so that the chain reads as it always has. */
    public LeasePolicy build() {
        return this;
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
     * {@link #trackDescendants(boolean)}.
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
}
