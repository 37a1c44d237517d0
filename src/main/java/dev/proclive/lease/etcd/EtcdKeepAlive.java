package dev.proclive.lease.etcd;

import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook.Grant;
import dev.proclive.lease.book.Records;
import dev.proclive.lease.book.Rounds;
import dev.proclive.etcd.Etcd;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Keeps alive the etcd leases of this JVM's grants, others' ({@code lease keep}) and its own (one per TTL, shared). A
 * grant is lost unconfirmed for 3/4 of its TTL, before etcd can expire it, or at once if etcd answers below a revision
 * seen ({@link Etcd.WentBack}: an older copy restored); its lease lives until ended here: its holder may write on.
 */
final class EtcdKeepAlive {

    private static final long FIRST_RETRY_MILLIS = 100;
    private static final long MAX_RETRY_MILLIS = TimeUnit.DAYS.toMillis(1);

    private final Etcd etcd;
    /** Stamps a record's {@code renewedAt}: what a write's answer is measured against. */
    private final Clock clock;
    /**
     * Kept grants, and lost ones until ended here. Kept to lost is one step, never out and back in: a round between
     * would find nothing to keep and end, and the lease would lapse under its writer.
     */
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private final Map<String, Long> lostFences = new ConcurrentHashMap<>();
    /** Grants lost for more than want of answers (etcd went back, the record moved to a lease gone): why. */
    private final Map<String, Because> because = new ConcurrentHashMap<>();

    /** {@code stays}: a listing's keep does not undo it (the record's lease gone, where a listing may be older). */
    private record Because(long fence, String said, boolean stays) {
    }
    private final Map<Long, Tracked> leases = new ConcurrentHashMap<>();
    /** This JVM's own etcd leases, by TTL in seconds. */
    private final Map<Long, Long> own = new ConcurrentHashMap<>();
    private final Rounds rounds;
    /** When the last round began ({@link System#nanoTime()}): the next comes a period after. */
    private volatile long began;
    /** How soon the next round comes while etcd may have changed under the grants (0: it is not in doubt). */
    private volatile long unsureMillis;

    /** A kept grant's record key, by lease name. */
    private final Function<String, String> recordKey;
    /** Reads a lease's record again: a read shows a kept grant's record moved ({@link #moved}). */
    private final Consumer<String> reread;

    EtcdKeepAlive(Etcd etcd, String threadName, Clock clock) {
        this(etcd, threadName, clock, name -> name, name -> { });
    }

    EtcdKeepAlive(Etcd etcd, String threadName, Clock clock, Function<String, String> recordKey, Consumer<String> reread) {
        this.etcd = etcd;
        this.clock = clock;
        this.recordKey = recordKey;
        this.reread = reread;
        this.rounds = new Rounds(threadName, this::round, this::nextRound);
    }

    /** {@code revision}: the record's when kept (0: unknown); only a later one moves the grant to another lease. */
    private record Held(Grant grant, boolean lost, long revision) {
    }

    private static final class Tracked {
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
    synchronized long shared(Duration ttl, Duration lasting) throws IOException {
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

    /** Whether {@code t} is let go; under the lock {@link #shared} holds, so that no write takes it meanwhile. */
    private synchronized boolean letGo(Tracked t) {
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

    /**
     * {@code revision} 0 (a listing's): a grant kept at a known revision stays on its lease while that is kept, and one
     * lost as its record's lease was found gone stays lost.
     */
    synchronized void keep(LeaseRecord r, long lease, long revision) {
        Held before = held.get(r.name());
        if (revision == 0 && before != null && before.revision() > 0 && keeping(r.name(), r.fence())) {
            leases.get(before.grant().session()).usedAt = System.nanoTime();
            return;
        }
        Because why = because.get(r.name());
        if (revision == 0 && why != null && why.fence() == r.fence() && why.stays()) {
            return;
        }
        lostFences.remove(r.name()); // a newer grant of the name: the lost one's record is not there any more
        because.remove(r.name());
        Tracked t = leases.get(lease);
        if (t == null || t.lost && !t.ours) {
            // another's, kept for its holder (again, if given up while etcd was silent and a read shows its grant)
            t = new Tracked(lease, r.ttl().toMillis(), false, System.nanoTime());
            leases.put(lease, t);
        }
        t.usedAt = System.nanoTime();
        held.put(r.name(), new Held(new Grant(r, lease), false, revision));
        start();
    }

    /**
     * A kept grant's record read at a later revision on another etcd lease: renewed by another process at another TTL,
     * onto that process's lease, which nothing here keeps. Kept alive from a first keep-alive sent now, by the TTL etcd
     * answers; one etcd does not confirm leaves the grant lost, as nothing here would keep the record. Only a read
     * shows it: a holder whose watch is down meanwhile learns it at its next read (the lease outlives its own).
     */
    void moved(LeaseRecord r, long lease, long revision) {
        Held h = held.get(r.name());
        if (h == null || h.lost() || lease == 0 || h.grant().session() == lease || revision <= h.revision()
                || !sameGrant(h.grant().record(), r)) {
            return;
        }
        Tracked known = leases.get(lease);
        long sent = System.nanoTime();
        long seconds;
        String failed = "etcd said it is gone";
        try {
            seconds = etcd.keepAlive(lease, Duration.ofMillis(Math.max(100, r.ttl().toMillis() / 6)));
        } catch (IOException | RuntimeException e) {
            if (Thread.currentThread().isInterrupted()) {
                return; // the caller's own end, not etcd's answer: the next read asks again
            }
            seconds = 0;
            failed = "etcd did not confirm it (" + e.getMessage() + ")";
        }
        synchronized (this) {
            Held now = held.get(r.name());
            if (now == null || now.lost() || now.grant().record().fence() != r.fence() || revision <= now.revision()) {
                return; // ended, lost, or written or moved at a later revision since: that one stands
            }
            Tracked t = leases.get(lease);
            boolean letGo = (known != null && t != known) || (t != null && t.lost);
            if (seconds <= 0 || letGo) {
                because.put(r.name(), new Because(r.fence(), "a renewal elsewhere moved its record onto etcd lease "
                        + lease + ", and " + (letGo ? "etcd found it gone, or it was let go, meanwhile" : failed), true));
                markLost(now.grant());
                return;
            }
            if (t == null) {
                t = new Tracked(lease, seconds * 1000, false, sent);
                leases.put(lease, t);
            } else if (sent - t.confirmedAt > 0) {
                t.confirmedAt = sent;
            }
            t.usedAt = System.nanoTime();
            held.put(r.name(), new Held(new Grant(r, lease), false, revision));
            start();
        }
    }

    /**
     * A kept grant's record as read again at {@code revision}, after it left the grant's etcd lease: one no longer the
     * grant's (gone, ended, another's) is kept no more, so that its etcd lease is not kept alive for it, nor its record
     * read again, each round for good (its holder is told by the engine, which reads it too). A move is {@link #moved}'s.
     */
    synchronized void readAgain(String name, java.util.Optional<LeaseRecord> now, long revision) {
        held.computeIfPresent(name, (n, h) -> h.lost() || revision <= h.revision()
                || now.filter(r -> sameGrant(h.grant().record(), r)).isPresent() ? h : null);
    }

    /** Whether {@code read} is still the grant {@code kept}: granted, at its fence, to its holder. */
    private static boolean sameGrant(LeaseRecord kept, LeaseRecord read) {
        return read.granted() && read.fence() == kept.fence() && Records.sameProcess(kept.holder(), read.holder());
    }

    boolean keeping(String name, long fence) {
        Grant k = kept(name);
        Tracked t = k == null ? null : leases.get(k.session());
        return k != null && k.record().fence() == fence && t != null && !t.lost;
    }

    private Grant kept(String name) {
        Held h = held.get(name);
        return h == null || h.lost() ? null : h.grant();
    }

    private List<Grant> kept() {
        return held.values().stream().filter(h -> !h.lost()).map(Held::grant).toList();
    }

    /** A new grant keeps the rhythm of the shortest TTL: it does not call early. */
    private void start() {
        rounds.by(soonest(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(periodMillis())));
    }

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

    /** Why the grant at {@code fence} of {@code name} was lost, where not for want of answers. */
    java.util.Optional<String> lostBecause(String name, long fence) {
        Because w = because.get(name);
        return w != null && w.fence() == fence ? java.util.Optional.of(w.said()) : java.util.Optional.empty();
    }

    /** Answered later than 3/4 of its TTL after {@code from}: lost from now on, whatever its etcd lease says. */
    boolean answeredLate(LeaseRecord r, Instant from) {
        long ttl = r.ttl().toMillis();
        if (!clock.instant().isAfter(from.plusMillis(ttl - ttl / 4))) {
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
            Tracked t = leases.get(k.session()); // its holder may write on until it is ended here
            return t != null && !t.lost ? new Held(k, true, h.revision()) : null;
        });
    }

    void stop() {
        held.clear();
        rounds.close(Duration.ZERO); // a round under way is interrupted: the client closes after this
    }

    private boolean nothingToKeep() {
        return held.isEmpty() && own.isEmpty();
    }

    /** None once nothing is left to keep: the thread ends, and the next grant starts one. */
    private OptionalLong nextRound() {
        return nothingToKeep() ? OptionalLong.empty()
                : OptionalLong.of(soonest(began + TimeUnit.MILLISECONDS.toNanos(periodMillis())));
    }

    private long periodMillis() {
        long shortest = leases.values().stream().mapToLong(t -> t.ttlMillis).min().orElse(3000);
        return Math.max(50, shortest / 3);
    }

    private void round() {
        began = System.nanoTime();
        if (nothingToKeep()) {
            return; // the last grant went since this round was set
        }
        long unsure = unsureMillis;
        boolean answered = unsure == 0 || probe(); // first: a cluster gone back must not keep a grant a moment more
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
                // a member that hangs costs a sixth of the TTL: the next is asked too, and the grant is kept
                if (etcd.keepAlive(t.id, Duration.ofMillis(t.ttlMillis / 6)) <= 0) {
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
        lookForMoves();
    }

    /**
     * Each round, the records on each kept lease: one moved off it (renewed elsewhere at another TTL) is read again, so
     * the move is seen though no watch told it (a stream gone quiet behind a proxy), before its new lease can lapse.
     */
    private void lookForMoves() {
        Map<Long, List<Grant>> bySession = new java.util.HashMap<>();
        kept().forEach(k -> bySession.computeIfAbsent(k.session(), id -> new ArrayList<>()).add(k));
        for (Map.Entry<Long, List<Grant>> e : bySession.entrySet()) {
            java.util.Optional<Set<String>> on;
            try {
                on = etcd.attached(e.getKey());
            } catch (IOException | RuntimeException failed) {
                continue; // asked again next round
            }
            if (on.isEmpty()) {
                return; // this client cannot tell
            }
            for (Grant k : e.getValue()) {
                if (!on.get().contains(recordKey.apply(k.record().name()))) {
                    reread.accept(k.record().name());
                }
            }
        }
    }

    /** Whether etcd answered an empty transaction, whose revision the client checks against the one seen. */
    private boolean probe() {
        List<Grant> kept = kept();
        if (kept.isEmpty()) {
            return true;
        }
        try {
            etcd.txn(List.of(), List.of());
            return true;
        } catch (Etcd.WentBack e) {
            kept.forEach(k -> because.put(k.record().name(), new Because(k.record().fence(), e.getMessage(), false)));
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
