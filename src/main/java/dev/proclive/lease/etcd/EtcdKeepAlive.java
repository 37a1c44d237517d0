package dev.proclive.lease.etcd;

import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook.Grant;
import dev.proclive.lease.book.Records;
import dev.proclive.lease.book.Rounds;
import dev.proclive.etcd.Etcd;
import dev.proclive.lease.etcd.EtcdLeases.Tracked;
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
    private final EtcdLeases leases;
    private final Rounds rounds;
    /** When the last round began ({@link System#nanoTime()}): the next comes a period after. */
    private volatile long began;
    /** How soon the next round comes while etcd may have changed under the grants (0: it is not in doubt). */
    private volatile long unsureMillis;

    /** A kept grant's record key, by lease name. */
    private final Function<String, String> recordKey;
    /** Reads a lease's record again: a read shows a kept grant's record moved ({@link #moved}). */
    private final Consumer<String> reread;

    EtcdKeepAlive(Etcd etcd, String threadName, Clock clock, Function<String, String> recordKey, Consumer<String> reread) {
        this.etcd = etcd;
        this.clock = clock;
        this.recordKey = recordKey;
        this.reread = reread;
        this.leases = new EtcdLeases(etcd, this, this::start);
        this.rounds = new Rounds(threadName, this::round, this::nextRound);
    }

    /** The etcd leases the grants kept here sit on; a write takes one from it. */
    EtcdLeases leases() {
        return leases;
    }

    /** {@code revision}: the record's when kept (0: unknown); only a later one moves the grant to another lease. */
    private record Held(Grant grant, boolean lost, long revision) {
    }

    synchronized void unsure() {
        if (unsureMillis == 0) {
            unsureMillis = FIRST_RETRY_MILLIS;
            if (!nothingToKeep()) {
                start();
            }
        }
    }

    /** {@code lease} is gone (etcd said so): grants on it are lost, and no new one goes onto it. */
    void forget(long lease) {
        leases.gone(lease);
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
            t = leases.track(lease, r.ttl().toMillis(), System.nanoTime());
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
                t = leases.track(lease, seconds * 1000, sent);
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
        return k != null && k.record().fence() == fence && leases.live(k.session());
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
        rounds.by(soonest(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(leases.periodMillis())));
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
            // its holder may write on until it is ended here
            return leases.live(k.session()) ? new Held(k, true, h.revision()) : null;
        });
    }

    void stop() {
        held.clear();
        rounds.close(Duration.ZERO); // a round under way is interrupted: the client closes after this
    }

    private boolean nothingToKeep() {
        return held.isEmpty() && leases.noneOwn();
    }

    /** None once nothing is left to keep: the thread ends, and the next grant starts one. */
    private OptionalLong nextRound() {
        return nothingToKeep() ? OptionalLong.empty()
                : OptionalLong.of(soonest(began + TimeUnit.MILLISECONDS.toNanos(leases.periodMillis())));
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
        for (Tracked t : leases.all()) {
            if (!used.contains(t.id) && leases.letGo(t)) {
                if (t.ours && !t.lost) {
                    leases.revokeQuietly(t.id);
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
        kept().stream().filter(k -> !leases.live(k.session())).forEach(this::markLost);
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

}
