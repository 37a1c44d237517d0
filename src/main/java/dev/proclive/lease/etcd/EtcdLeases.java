package dev.proclive.lease.etcd;

import dev.proclive.etcd.Etcd;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The etcd leases grants here sit on: this JVM's own (one per TTL, shared by its writes) and others' kept for their
 * holders, each with when etcd last confirmed it and whether a write still uses it. {@link EtcdKeepAlive} keeps them.
 */
final class EtcdLeases {

    private final Etcd etcd;
    /** Its monitor: a lease is let go, or shared, under the lock its keeps and moves take. */
    private final EtcdKeepAlive keepAlive;
    /** A new lease of this JVM's: the keep-alive rounds start. */
    private final Runnable started;
    private final Map<Long, Tracked> leases = new ConcurrentHashMap<>();
    /** This JVM's own etcd leases, by TTL in seconds. */
    private final Map<Long, Long> own = new ConcurrentHashMap<>();

    EtcdLeases(Etcd etcd, EtcdKeepAlive keepAlive, Runnable started) {
        this.etcd = etcd;
        this.keepAlive = keepAlive;
        this.started = started;
    }

    static final class Tracked {
        final long id;
        final long ttlMillis;
        final boolean ours;
        volatile long confirmedAt;
        volatile boolean lost;
        volatile long usedAt;
        /** Writes handed this lease whose answer is not known yet: while there are any, it is in use. */
        final AtomicInteger inFlight = new AtomicInteger();

        Tracked(long id, long ttlMillis, boolean ours, long confirmedAt) {
            this.id = id;
            this.ttlMillis = ttlMillis;
            this.ours = ours;
            this.confirmedAt = confirmedAt;
            this.usedAt = confirmedAt;
        }

        boolean overdue(long now) {
            return lost || Duration.ofNanos(now - confirmedAt).toMillis() > ttlMillis - ttlMillis / 4;
        }
    }

    /** In use until {@link #answered}: a lease revoked under a write in flight would take the record with it. */
    long shared(Duration ttl) throws IOException {
        return shared(ttl, Duration.ZERO);
    }

    /** {@link #shared(Duration)}, one that has at least {@code lasting} left, unkept (else a new one). */
    long shared(Duration ttl, Duration lasting) throws IOException {
        synchronized (keepAlive) {
            long seconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
            Long id = own.get(seconds);
            Tracked t = id == null ? null : leases.get(id);
            long now = System.nanoTime();
            long left = t == null ? 0 : t.ttlMillis - Duration.ofNanos(now - t.confirmedAt).toMillis();
            if (t != null && !t.overdue(now) && left > t.ttlMillis / 2 && left >= lasting.toMillis()) {
                t.usedAt = now;
                t.inFlight.incrementAndGet();
                return t.id;
            }
            // a record on no etcd lease would never expire: a dead holder's grant would stand for good
            long granted = Etcd.granted(etcd.grant(Duration.ofSeconds(seconds)), "a grant's record");
            Tracked made = new Tracked(granted, seconds * 1000, true, now);
            made.inFlight.incrementAndGet();
            leases.put(granted, made);
            own.put(seconds, granted);
            started.run();
            return granted;
        }
    }

    /** The answer to a write handed {@code lease} by {@link #shared} is known (it may have failed). */
    void answered(long lease) {
        Tracked t = leases.get(lease);
        if (t != null) {
            t.usedAt = System.nanoTime();
            t.inFlight.decrementAndGet();
        }
    }

    /** Whether {@code t} is let go; under the lock {@link #shared} holds, so that no write takes it meanwhile. */
    boolean letGo(Tracked t) {
        synchronized (keepAlive) {
            if (Duration.ofNanos(System.nanoTime() - t.usedAt).toMillis() <= t.ttlMillis / 3 || t.inFlight.get() > 0) {
                return false;
            }
            own.values().remove(t.id);
            leases.remove(t.id);
            return true;
        }
    }

    boolean alive(long lease) {
        Tracked t = leases.get(lease);
        return t != null && !t.overdue(System.nanoTime());
    }

    /** Whether {@code lease} is tracked and not found gone: grants on it stand. */
    boolean live(long lease) {
        Tracked t = leases.get(lease);
        return t != null && !t.lost;
    }

    Tracked get(long lease) {
        return leases.get(lease);
    }

    /** Another's lease, kept for a grant here from {@code confirmedAt} ({@link System#nanoTime()}). */
    Tracked track(long lease, long ttlMillis, long confirmedAt) {
        Tracked t = new Tracked(lease, ttlMillis, false, confirmedAt);
        leases.put(lease, t);
        return t;
    }

    /** {@code lease} is gone (etcd said so): no new write goes onto it. */
    void gone(long lease) {
        Tracked t = leases.get(lease);
        if (t != null) {
            t.lost = true;
        }
        own.values().remove(lease);
    }

    List<Tracked> all() {
        return new ArrayList<>(leases.values());
    }

    boolean noneOwn() {
        return own.isEmpty();
    }

    long periodMillis() {
        long shortest = leases.values().stream().mapToLong(t -> t.ttlMillis).min().orElse(3000);
        return Math.max(50, shortest / 3);
    }

    void revokeQuietly(long lease) {
        try {
            etcd.revoke(lease);
        } catch (IOException | RuntimeException e) {
            // it expires by itself; nothing of a live grant is attached to it
        }
    }
}
