package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.lease.etcd.Etcd;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A lease store's records in etcd. {@code PREFIX NAME} holds the record's JSON, attached to an etcd
 * lease of the record's TTL while it is granted (so it goes away by itself when nobody keeps it
 * alive); {@code PREFIX NAME.fence} is never leased and never deleted, and <b>the fence is its
 * {@code mod_revision}</b>: it is written in the transaction of every new grant (and every
 * held-to-held hand-off), and etcd's revisions only grow. A record written by a grant carries fence
 * 0 in its JSON (the transaction's revision is not known before it commits) and is read with the
 * fence key's revision; later writes carry the fence itself.
 *
 * <p>There is no lock: a writer reads both keys at one revision, decides, and writes in one
 * transaction that compares both keys' {@code mod_revision} with what it read; when another writer
 * came first it reads and decides again. Reads are linearizable, so a member cut off from its
 * majority answers nothing, and nothing is granted.
 *
 * <p>Every grant this JVM writes is kept alive by one thread (every third of its TTL) until it is
 * ended here, or its holder is seen DEAD (then a newcomer on this machine takes it over at once,
 * and elsewhere it expires), or its keep-alive fails for longer than the TTL less a quarter: then
 * it is {@linkplain #lost lost}, before its etcd lease can have expired.
 */
final class EtcdBook implements LeaseBook {

    private static final String FENCE_SUFFIX = ".fence";
    /** How often a writer reads and tries again before it says the lease is too contended. */
    private static final int TRIES = 64;

    private final Etcd etcd;
    private final String prefix;
    private final Clock clock;
    private final LivenessChecker checker;
    /** Per lease name: the store revision of the last read, where a watch starts from. */
    private final Map<String, Long> seen = new ConcurrentHashMap<>();
    private final KeepAlive keepAlive;

    EtcdBook(Etcd etcd, String prefix, Clock clock, LivenessChecker checker) {
        this.etcd = etcd;
        this.prefix = prefix;
        this.clock = clock;
        this.checker = checker;
        this.keepAlive = new KeepAlive();
    }

    /** The etcd client, for the keeper of grants ({@code lease keep}). */
    Etcd etcd() {
        return etcd;
    }

    String prefix() {
        return prefix;
    }

    /**
     * Refuses a name whose record key would be another lease's fence key: on etcd a lease name
     * does not end in {@code .fence}.
     */
    static void checkName(String name) {
        if (name.endsWith(FENCE_SUFFIX)) {
            throw new IllegalArgumentException("on etcd a lease name does not end in '" + FENCE_SUFFIX
                    + "' (that key holds a lease's fence): " + LeaseText.quote(name));
        }
    }

    private String recordKey(String name) {
        return prefix + name;
    }

    private String fenceKey(String name) {
        return prefix + name + FENCE_SUFFIX;
    }

    /** Both keys of a lease, read at one revision. */
    private record Snapshot(Optional<LeaseRecord> record, Optional<Etcd.KeyValue> recordKv, long fenceRevision,
                            long revision) {
        long recordRevision() {
            return recordKv.map(Etcd.KeyValue::modRevision).orElse(0L);
        }

        long etcdLease() {
            return recordKv.map(Etcd.KeyValue::lease).orElse(0L);
        }
    }

    private Snapshot snapshot(String name) throws IOException {
        Etcd.Outcome o = etcd.txn(List.of(), List.of(new Etcd.Get(recordKey(name)), new Etcd.Get(fenceKey(name))));
        seen.put(name, o.revision());
        Optional<Etcd.KeyValue> kv = o.reads().get(0);
        long fenceRevision = o.reads().get(1).map(Etcd.KeyValue::modRevision).orElse(0L);
        Optional<LeaseRecord> record = Optional.empty();
        if (kv.isPresent()) {
            LeaseRecord r = LeaseJson.read(name, kv.get().value());
            if (r.fence() == 0) {
                if (fenceRevision == 0) {
                    throw new LeaseCorruptException(name, "the record says fence 0 and there is no fence key "
                            + LeaseText.quote(fenceKey(name)) + ": break the lease to go on");
                }
                r = r.fenced(fenceRevision);
            } else if (r.fence() > fenceRevision) {
                throw new LeaseCorruptException(name, "the record is at fence " + r.fence() + " but its fence key is at "
                        + fenceRevision + ": it was not written by a proclive store; break the lease to go on");
            }
            record = Optional.of(r);
        }
        return new Snapshot(record, kv, fenceRevision, o.revision());
    }

    @Override
    public Optional<LeaseRecord> read(String name) throws IOException {
        checkName(name);
        return snapshot(name).record();
    }

    /** Another writer came first: read and decide again. */
    private static final class Conflict extends IOException {
        private static final long serialVersionUID = 1L;

        Conflict() {
            super(null, null);
        }
    }

    @Override
    public <T> T locked(String name, Locked<T> work) throws IOException {
        checkName(name);
        for (int tries = 0; tries < TRIES; tries++) {
            try {
                return work.run(new TxnGuard(name, snapshot(name)));
            } catch (Conflict again) {
                Thread.onSpinWait();
            }
        }
        throw new IOException("lease " + name + " changed under " + TRIES + " writes in a row: too contended to decide");
    }

    @Override
    public Map<String, String> environment() {
        return Map.of(LeaseStore.ETCD_VARIABLE, etcd.endpoints(), LeaseStore.PREFIX_VARIABLE, prefix);
    }

    @Override
    public Optional<CompletableFuture<Void>> changed(String name) {
        return Optional.of(etcd.changed(recordKey(name), seen.getOrDefault(name, 0L)));
    }

    @Override
    public boolean lost(String name, long fence) {
        return keepAlive.lost(name, fence);
    }

    @Override
    public void close() {
        keepAlive.stop();
        etcd.close();
    }

    /** Keeps alive every grant of this JVM's (see the class). */
    void keep(LeaseRecord r, long etcdLease) {
        keepAlive.keep(r, etcdLease);
    }

    /** A granted record and the etcd lease it is attached to. */
    record Grant(LeaseRecord record, long etcdLease) {
    }

    /**
     * Every granted record under the prefix, read at one revision; records that cannot be read
     * (not a lease's, or corrupt) are left out: a keeper keeps what it can prove is a grant.
     */
    List<Grant> grants() throws IOException {
        List<Etcd.KeyValue> all = etcd.list(prefix);
        Map<String, Long> fences = new java.util.HashMap<>();
        for (Etcd.KeyValue kv : all) {
            if (kv.key().endsWith(FENCE_SUFFIX)) {
                fences.put(kv.key().substring(prefix.length(), kv.key().length() - FENCE_SUFFIX.length()), kv.modRevision());
            }
        }
        List<Grant> grants = new ArrayList<>();
        for (Etcd.KeyValue kv : all) {
            String name = kv.key().substring(prefix.length());
            if (name.endsWith(FENCE_SUFFIX) || kv.lease() == 0) {
                continue;
            }
            try {
                LeaseStore.checkName(name);
                LeaseRecord r = LeaseJson.read(name, kv.value());
                long fence = fences.getOrDefault(name, 0L);
                if (r.fence() == 0 && fence != 0) {
                    r = r.fenced(fence);
                }
                if (r.granted() && r.fence() != 0 && r.fence() <= fence) {
                    grants.add(new Grant(r, kv.lease()));
                }
            } catch (IllegalArgumentException | LeaseCorruptException e) {
                // not a record this keeper can vouch for
            }
        }
        return grants;
    }

    /** Whether this JVM keeps the grant at {@code fence} of lease {@code name} alive now. */
    boolean keeps(String name, long fence) {
        return keepAlive.keeps(name, fence);
    }

    private final class TxnGuard implements Guard {
        private final String name;
        private Snapshot read;

        TxnGuard(String name, Snapshot read) {
            this.name = name;
            this.read = read;
        }

        @Override
        public Optional<LeaseRecord> record() {
            return read.record();
        }

        @Override
        public long fence() {
            return read.fenceRevision();
        }

        private List<Etcd.Compare> unchanged() {
            return List.of(new Etcd.Compare(recordKey(name), read.recordRevision()),
                    new Etcd.Compare(fenceKey(name), read.fenceRevision()));
        }

        @Override
        public void replace(LeaseRecord r) throws IOException {
            long lease = 0;
            boolean fresh = false;
            if (r.granted()) {
                lease = read.etcdLease();
                boolean sameTtl = read.record().map(old -> old.granted() && old.ttl().equals(r.ttl())).orElse(false);
                if (lease != 0 && sameTtl && etcd.keepAlive(lease) <= 0) {
                    throw new Conflict(); // it expired since it was read: the record is gone, decide again
                }
                if (lease == 0 || !sameTtl) {
                    lease = etcd.grant(r.ttl());
                    fresh = true;
                }
            }
            Etcd.Outcome o = write(List.of(new Etcd.Put(recordKey(name), bytes(r), lease)), fresh ? lease : 0);
            long previous = read.etcdLease();
            read = new Snapshot(Optional.of(r), Optional.of(new Etcd.KeyValue(recordKey(name), new byte[0], 0,
                    o.revision(), lease)), read.fenceRevision(), o.revision());
            if (r.granted()) {
                keep(r, lease);
            } else {
                keepAlive.drop(name);
            }
            if (previous != 0 && previous != lease) {
                revokeQuietly(previous);
            }
        }

        @Override
        public LeaseRecord grant(LeaseRecord r) throws IOException {
            long lease = etcd.grant(r.ttl());
            Etcd.Outcome o = write(List.of(new Etcd.Put(fenceKey(name), name.getBytes(StandardCharsets.UTF_8), 0),
                    new Etcd.Put(recordKey(name), bytes(r.fenced(0)), lease)), lease);
            LeaseRecord granted = r.fenced(o.revision());
            long previous = read.etcdLease();
            read = new Snapshot(Optional.of(granted), Optional.of(new Etcd.KeyValue(recordKey(name), new byte[0], 0,
                    o.revision(), lease)), o.revision(), o.revision());
            keep(granted, lease);
            if (previous != 0) {
                revokeQuietly(previous); // the taken-over holder's: nothing is attached to it any more
            }
            return granted;
        }

        /** Runs {@code puts} if nothing changed since the read; else revokes {@code fresh} (when not 0) and says so. */
        private Etcd.Outcome write(List<Etcd.Op> puts, long fresh) throws IOException {
            Etcd.Outcome o;
            try {
                o = etcd.txn(unchanged(), puts);
            } catch (IOException | RuntimeException e) {
                if (fresh != 0) {
                    revokeQuietly(fresh);
                }
                throw e;
            }
            if (!o.succeeded()) {
                if (fresh != 0) {
                    revokeQuietly(fresh);
                }
                throw new Conflict();
            }
            return o;
        }

        @Override
        public Optional<Instant> expiresAt() throws IOException {
            long lease = read.etcdLease();
            if (lease == 0) {
                return Optional.empty();
            }
            long left = etcd.timeToLive(lease);
            return Optional.of(clock.instant().plusSeconds(Math.max(0, left)));
        }
    }

    private static byte[] bytes(LeaseRecord r) {
        return (r.toJson() + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private void revokeQuietly(long lease) {
        try {
            etcd.revoke(lease);
        } catch (IOException | RuntimeException e) {
            // it expires by itself; nothing of a live grant is attached to it
        }
    }

    /**
     * One thread for every grant this JVM keeps alive. A grant whose keep-alive has not been
     * confirmed for its TTL less a quarter is lost: said before its etcd lease can have expired
     * (the clock of this JVM runs no faster than etcd's by more than that).
     */
    private final class KeepAlive implements Runnable {
        private final Map<String, Kept> kept = new ConcurrentHashMap<>();
        private final Map<String, Long> lostFences = new ConcurrentHashMap<>();
        private Thread thread;
        private volatile boolean stopped;

        private final class Kept {
            final LeaseRecord record;
            final long lease;
            volatile long confirmedAt;

            Kept(LeaseRecord record, long lease, long confirmedAt) {
                this.record = record;
                this.lease = lease;
                this.confirmedAt = confirmedAt;
            }

            long ttlMillis() {
                return record.ttl().toMillis();
            }
        }

        synchronized void keep(LeaseRecord r, long lease) {
            lostFences.remove(r.name());
            kept.put(r.name(), new Kept(r, lease, System.nanoTime()));
            if (thread == null && !stopped) {
                thread = new Thread(this, "proclive-etcd-keepalive");
                thread.setDaemon(true);
                thread.start();
            }
            notifyAll();
        }

        void drop(String name) {
            kept.remove(name);
        }

        boolean keeps(String name, long fence) {
            Kept k = kept.get(name);
            return k != null && k.record.fence() == fence;
        }

        boolean lost(String name, long fence) {
            Long f = lostFences.get(name);
            if (f != null && f == fence) {
                return true;
            }
            Kept k = kept.get(name);
            if (k != null && k.record.fence() == fence && overdue(k, System.nanoTime())) {
                markLost(k);
                return true;
            }
            return false;
        }

        private boolean overdue(Kept k, long now) {
            return Duration.ofNanos(now - k.confirmedAt).toMillis() > k.ttlMillis() - k.ttlMillis() / 4;
        }

        private void markLost(Kept k) {
            kept.remove(k.record.name(), k);
            lostFences.put(k.record.name(), k.record.fence());
        }

        synchronized void stop() {
            stopped = true;
            kept.clear();
            notifyAll();
        }

        @Override
        public void run() {
            while (true) {
                long wait;
                synchronized (this) {
                    if (stopped) {
                        return;
                    }
                    if (kept.isEmpty()) {
                        try {
                            wait(0);
                        } catch (InterruptedException e) {
                            return;
                        }
                        continue;
                    }
                    wait = kept.values().stream().mapToLong(Kept::ttlMillis).min().orElse(3000) / 3;
                }
                for (Kept k : new ArrayList<>(kept.values())) {
                    tick(k);
                }
                synchronized (this) {
                    try {
                        if (!stopped) {
                            wait(Math.max(50, wait));
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }

        private void tick(Kept k) {
            Identity holder = k.record.holder();
            if (checker.check(holder) == Liveness.DEAD) {
                kept.remove(k.record.name(), k); // a newcomer here takes it over at once; elsewhere it expires
                return;
            }
            long sent = System.nanoTime();
            try {
                long ttl = etcd.keepAlive(k.lease);
                if (ttl <= 0) {
                    markLost(k); // expired or revoked: someone else may hold it now
                } else {
                    k.confirmedAt = sent;
                }
            } catch (IOException | RuntimeException e) {
                if (overdue(k, System.nanoTime())) {
                    markLost(k);
                }
            }
        }
    }
}
