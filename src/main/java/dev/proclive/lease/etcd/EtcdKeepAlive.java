package dev.proclive.lease.etcd;

import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook.Grant;
import dev.proclive.lease.book.Rounds;
import dev.proclive.etcd.Etcd;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One thread for every grant this JVM keeps alive, and the etcd leases they are attached to: this
 * JVM's own, one per TTL, shared by the grants it writes, and others' for grants it keeps for them
 * ({@code lease keep}). A grant is lost when anyone else may be granted soon: its etcd lease not
 * confirmed alive for its TTL less a quarter (said before etcd can have let the lease expire), or
 * the answer to its write come later than that after it was stamped ({@link #answeredLate}). An own
 * etcd lease no grant uses any more is revoked. A grant found lost still uses its etcd lease until
 * it is ended here: whatever may still write under its fence, nothing here frees the lease for
 * another before that — it is kept alive, never revoked.
 *
 * <p>When etcd may have changed under the grants (the prefix's watch broke, as when a member
 * restarts; a keep-alive went unanswered), rounds come soon (a tenth of a second, doubling up to the
 * usual period) until one is answered whole, each also making a key-value call: an etcd restored
 * from an older copy of its data answers below the revision this JVM saw ({@link Etcd.WentBack}),
 * and every grant kept here is lost at once, not a third of the TTL later.
 */
final class EtcdKeepAlive {

    private static final long FIRST_RETRY_MILLIS = 100;
    private static final long MAX_RETRY_MILLIS = TimeUnit.DAYS.toMillis(1);

    private final Etcd etcd;
    /** The store's clock, which stamps a record's {@code renewedAt}: what a write's answer is measured against. */
    private final Clock clock;
    /**
     * The grant kept for each name, and, until it is ended here, one found lost: its holder may
     * still write, so it keeps its etcd lease in use. A grant goes from kept to lost in one step,
     * never out of the map and back in: a round that looks between them would find nothing to keep
     * and end, and the lost grant's etcd lease would lapse under its writer.
     */
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private final Map<String, Long> lostFences = new ConcurrentHashMap<>();
    private final Map<Long, Tracked> leases = new ConcurrentHashMap<>();
    /** This JVM's own etcd leases, by TTL in seconds. */
    private final Map<Long, Long> own = new ConcurrentHashMap<>();
    private final Rounds rounds;
    /** When the last round began ({@link System#nanoTime()}): the next comes a period after. */
    private volatile long began;
    /** How soon the next round comes while etcd may have changed under the grants (0: it is not in doubt). */
    private volatile long unsureMillis;

    EtcdKeepAlive(Etcd etcd, String threadName, Clock clock) {
        this.etcd = etcd;
        this.clock = clock;
        this.rounds = new Rounds(threadName, this::round, this::nextRound);
    }

    /** A grant this JVM keeps, or ({@code lost}) one found lost and not ended yet. */
    private record Held(Grant grant, boolean lost) {
    }

    private static final class Tracked {
        final long id;
        final long ttlMillis;
        final boolean ours;
        volatile long confirmedAt;
        volatile boolean lost;
        /** When a grant last went onto it or was kept on it. */
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

    /**
     * This JVM's etcd lease of {@code ttl}, granted when there is none that is surely alive, for a
     * write about to be sent: in use until {@link #answered} says that write's answer is known (a
     * lease revoked under a write in flight would take the record just written with it).
     */
    synchronized long shared(Duration ttl) throws IOException {
        long seconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
        Long id = own.get(seconds);
        Tracked t = id == null ? null : leases.get(id);
        long now = System.nanoTime();
        if (t != null && !t.overdue(now) && Duration.ofNanos(now - t.confirmedAt).toMillis() < t.ttlMillis / 2) {
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
        start();
        return granted;
    }

    /** The answer to a write handed {@code lease} by {@link #shared} is known (it may have failed). */
    void answered(long lease) {
        Tracked t = leases.get(lease);
        if (t != null) {
            t.usedAt = System.nanoTime();
            t.inFlight.decrementAndGet();
        }
    }

    /** Whether {@code t}, which no kept grant uses, is let go: decided under the lock {@link #shared} holds. */
    private synchronized boolean letGo(Tracked t) {
        // time to let it go once no grant has used it for a third of its TTL, and no write is in flight on it
        if (Duration.ofNanos(System.nanoTime() - t.usedAt).toMillis() <= t.ttlMillis / 3 || t.inFlight.get() > 0) {
            return false;
        }
        own.values().remove(t.id);
        leases.remove(t.id);
        return true;
    }

    synchronized void unsure() {
        if (unsureMillis == 0) {
            unsureMillis = FIRST_RETRY_MILLIS;
            if (!nothingToKeep()) {
                start();
            }
        }
    }

    /** Whether {@code lease} is one this JVM keeps alive and surely is. */
    boolean alive(long lease) {
        Tracked t = leases.get(lease);
        return t != null && !t.overdue(System.nanoTime());
    }

    /** {@code lease} is gone (etcd said so): grants on it are lost, and no new one goes onto it. */
    void forget(long lease) {
        Tracked t = leases.get(lease);
        if (t != null) {
            t.lost = true;
        }
        own.values().remove(lease);
        held.values().removeIf(h -> h.lost() && h.grant().session() == lease); // gone, and its records with it
    }

    synchronized void keep(LeaseRecord r, long lease) {
        lostFences.remove(r.name()); // a newer grant of the name: the lost one's record is not there any more
        Tracked t = leases.get(lease);
        if (t == null || t.lost && !t.ours) {
            // another's lease, kept for its holder: one given up while etcd did not answer is kept
            // again once a read shows its grant still there
            t = new Tracked(lease, r.ttl().toMillis(), false, System.nanoTime());
            leases.put(lease, t);
        }
        t.usedAt = System.nanoTime();
        held.put(r.name(), new Held(new Grant(r, lease), false));
        start();
    }

    boolean keeping(String name, long fence) {
        Grant k = kept(name);
        Tracked t = k == null ? null : leases.get(k.session());
        return k != null && k.record().fence() == fence && t != null && !t.lost;
    }

    /** The grant kept for {@code name}, not one found lost; null when none is. */
    private Grant kept(String name) {
        Held h = held.get(name);
        return h == null || h.lost() ? null : h.grant();
    }

    private List<Grant> kept() {
        return held.values().stream().filter(h -> !h.lost()).map(Held::grant).toList();
    }

    /**
     * Sets the next round a period from now, or sooner while unsure, unless one is set sooner
     * already: a new grant keeps the rhythm of the shortest TTL, it does not call early.
     */
    private void start() {
        rounds.by(soonest(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(periodMillis())));
    }

    /** {@code at}, or sooner while etcd may have changed under the grants. */
    private long soonest(long at) {
        long unsure = unsureMillis;
        long soon = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(unsure);
        return unsure > 0 && soon - at < 0 ? soon : at;
    }

    void drop(String name) {
        held.remove(name);
    }

    /** The grant at {@code fence} of {@code name} is ended here: if it was lost, it holds its etcd lease no more. */
    void ended(String name, long fence) {
        held.computeIfPresent(name, (n, h) -> h.lost() && h.grant().record().fence() == fence ? null : h);
    }

    boolean lost(String name, long fence) {
        Long f = lostFences.get(name);
        if (f != null && f == fence) {
            return true;
        }
        Grant k = kept(name);
        if (k == null || k.record().fence() != fence) {
            return false;
        }
        Tracked t = leases.get(k.session());
        if (t == null || t.overdue(System.nanoTime())) {
            markLost(k);
            return true;
        }
        return false;
    }

    /**
     * Whether the answer to the write of {@code r} came later than its TTL less a quarter after the
     * write was stamped ({@code renewedAt}): then it is lost from now on, whatever its etcd lease says.
     */
    boolean answeredLate(LeaseRecord r) {
        long ttl = r.ttl().toMillis();
        if (!clock.instant().isAfter(r.renewedAt().plusMillis(ttl - ttl / 4))) {
            return false;
        }
        Grant k = kept(r.name());
        if (k != null && k.record().fence() == r.fence()) {
            markLost(k);
        } else {
            lostFences.put(r.name(), r.fence());
        }
        return true;
    }

    private void markLost(Grant k) {
        lostFences.put(k.record().name(), k.record().fence()); // first: lost() says so from before it leaves kept()
        held.computeIfPresent(k.record().name(), (n, h) -> {
            if (h.lost() || !h.grant().equals(k)) {
                return h;
            }
            Tracked t = leases.get(k.session());
            return t != null && !t.lost ? new Held(k, true) : null; // its holder may write on until it is ended here
        });
    }

    void stop() {
        held.clear();
        rounds.close(Duration.ZERO); // a round under way is interrupted: the client closes after this
    }

    private boolean nothingToKeep() {
        return held.isEmpty() && own.isEmpty();
    }

    /**
     * When the round after one is due: a period (a third of the shortest TTL) after that one began,
     * or sooner while etcd may have changed under the grants; none once nothing is left to keep (the
     * thread ends; the next grant starts one). Nothing ends the rounds silently while anything is
     * kept (every grant on them would wait in vain to be told): what a round throws, an {@code Error}
     * too, is followed by the next round all the same ({@link Rounds}).
     */
    private OptionalLong nextRound() {
        return nothingToKeep() ? OptionalLong.empty()
                : OptionalLong.of(soonest(began + TimeUnit.MILLISECONDS.toNanos(periodMillis())));
    }

    /** A third of the shortest TTL kept: the rhythm of the rounds. */
    private long periodMillis() {
        long shortest = leases.values().stream().mapToLong(t -> t.ttlMillis).min().orElse(3000);
        return Math.max(50, shortest / 3);
    }

    private void round() {
        began = System.nanoTime();
        if (nothingToKeep()) {
            return; // the last grant went since this round was set: nothing to keep alive, and the thread ends
        }
        long unsure = unsureMillis;
        boolean answered = unsure == 0 || probe();
        Set<Long> used = new HashSet<>();
        held.values().forEach(h -> used.add(h.grant().session())); // lost, not ended: never revoked under its writer
        for (Tracked t : new ArrayList<>(leases.values())) {
            if (!used.contains(t.id) && letGo(t)) {
                if (t.ours && !t.lost) {
                    revokeQuietly(t.id);
                }
                continue;
            }
            long sent = System.nanoTime();
            try {
                if (etcd.keepAlive(t.id) <= 0) {
                    forget(t.id); // expired or revoked: someone else may hold its grants now
                } else {
                    t.confirmedAt = sent;
                }
            } catch (IOException | RuntimeException e) {
                answered = false;
                if (t.overdue(System.nanoTime())) {
                    forget(t.id);
                }
            }
        }
        synchronized (this) {
            if (unsureMillis == unsure) { // else a watch broke during this round: the next one comes soon
                unsureMillis = answered ? 0 : Math.max(FIRST_RETRY_MILLIS, Math.min(2 * unsure, MAX_RETRY_MILLIS));
            }
        }
        for (Grant k : kept()) {
            Tracked t = leases.get(k.session());
            if (t == null || t.lost) {
                markLost(k);
            }
        }
    }

    /**
     * An empty transaction, whose revision the client compares with what this JVM saw: whether it
     * was answered. When it went back, every grant kept here is lost.
     */
    private boolean probe() {
        List<Grant> kept = kept();
        if (kept.isEmpty()) {
            return true;
        }
        try {
            etcd.txn(List.of(), List.of());
            return true;
        } catch (Etcd.WentBack e) {
            kept.forEach(this::markLost);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private void revokeQuietly(long lease) {
        try {
            etcd.revoke(lease);
        } catch (IOException | RuntimeException e) {
            // it expires by itself; nothing of a live grant is attached to it
        }
    }
}
