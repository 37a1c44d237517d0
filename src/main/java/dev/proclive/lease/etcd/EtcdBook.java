package dev.proclive.lease.etcd;

import dev.proclive.Identity;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.lease.book.Records;
import dev.proclive.etcd.Etcd;
import dev.proclive.text.OneLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A lease store's records in etcd. {@code PREFIX NAME} holds the record's JSON, attached to an etcd
 * lease while it is granted (so it goes away by itself when nobody keeps it alive);
 * {@code PREFIX NAME.fence} is never leased and never deleted, and <b>the fence is its
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
 * <p>Every grant this JVM writes goes onto its own etcd lease of its TTL (the store's session, as
 * etcd's {@code concurrency.Session}), kept alive by {@link EtcdKeepAlive}, which says when a grant
 * is {@linkplain #lost lost}. A record is not rewritten to stay alive: a newcomer that takes an UNKNOWN
 * holder's lease after its TTL waits for that etcd lease to expire ({@link LeaseBook.Guard#freshUntil}).
 * One watch over the prefix ({@link PrefixWatch}) tells every kept grant and waiter of a change.
 */
public final class EtcdBook implements LeaseBook {

    private static final String FENCE_SUFFIX = ".fence";
    /** How often a writer reads and tries again before it says the lease is too contended. */
    private static final int TRIES = 64;
    /** The TTL of the etcd lease this JVM's waiters' tickets live on. */
    private static final Duration TICKET_TTL = Duration.ofSeconds(10);
    /** How many leases' snapshots are remembered before they are forgotten, all at once. */
    private static final int REMEMBERED = 4096;

    /** The etcd endpoints of a store on etcd, comma-separated (never a password), in a spawned process's environment. */
    public static final String ETCD_VARIABLE = "PROCLIVE_LEASE_ETCD";
    /** The key prefix of a store on etcd, in a spawned process's environment. */
    public static final String PREFIX_VARIABLE = "PROCLIVE_LEASE_PREFIX";

    private final Etcd etcd;
    private final String prefix;
    private final Clock clock;
    private final EtcdKeepAlive keepAlive;
    private final PrefixWatch watch;
    /** The etcd lease of this JVM's waiters' tickets (0: none yet), and when it was last confirmed alive. */
    private long ticketLease;
    private long ticketLeaseConfirmed;
    /**
     * The latest snapshot known of each lease this JVM wrote or read: a grant's watch starts from its
     * revision (one forgotten is read again, so all may be forgotten at once).
     */
    private final Map<String, Snapshot> known = new ConcurrentHashMap<>();

    public EtcdBook(Etcd etcd, String prefix, Clock clock) {
        this.etcd = etcd;
        this.prefix = prefix;
        this.clock = clock;
        this.keepAlive = new EtcdKeepAlive(etcd, "proclive-etcd-keepalive " + prefix, clock);
        this.watch = new PrefixWatch(etcd, prefix, keepAlive::unsure);
    }

    /** On etcd a lease name does not end in {@code .fence}: its record key would be another lease's fence key. */
    private static void checkName(String name) {
        if (name.endsWith(FENCE_SUFFIX)) {
            throw new IllegalArgumentException("on etcd a lease name does not end in '" + FENCE_SUFFIX
                    + "' (that key holds a lease's fence): " + OneLine.quote(name));
        }
    }

    private String recordKey(String name) {
        return prefix + name;
    }

    private String fenceKey(String name) {
        return prefix + name + FENCE_SUFFIX;
    }

    /** Where lease {@code name}'s waiters are: one key each below it. */
    private String queuePrefix(String name) {
        return prefix + name + ".queue/";
    }

    /** A waiter's key: one per process (its identity's digest), whichever machine it waits on. */
    private String waiterKey(String name, LeaseBook.Waiter w) {
        Identity who = w.who();
        String id = who.pid() + "\n" + who.start() + "\n" + who.boot() + "\n" + who.host() + "\n" + who.machine();
        return queuePrefix(name) + Records.digest(id).substring(0, 32);
    }

    /**
     * Both keys of a lease, read at one revision: the record (or why what is at its key cannot be
     * trusted), its key's mod revision and etcd lease (0: absent, none), and the fence key's revision.
     */
    private record Snapshot(Optional<LeaseRecord> record, Optional<LeaseCorruptException> corrupt, long recordRevision,
                            long etcdLease, long fenceRevision, long revision) {
        Optional<LeaseRecord> trusted() throws LeaseCorruptException {
            if (corrupt.isPresent()) {
                throw corrupt.get();
            }
            return record;
        }
    }

    private Snapshot snapshot(String name) throws IOException {
        return parse(name, etcd.txn(List.of(), reads(name)));
    }

    private List<Etcd.Op> reads(String name) {
        return List.of(new Etcd.Get(recordKey(name)), new Etcd.Get(fenceKey(name)));
    }

    /** The snapshot {@code o}'s two reads make (of {@link #reads}), remembered as the latest known. */
    private Snapshot parse(String name, Etcd.Outcome o) {
        Optional<Etcd.KeyValue> kv = o.reads().get(0);
        long fenceRevision = o.reads().get(1).map(Etcd.KeyValue::modRevision).orElse(0L);
        long recordRevision = kv.map(Etcd.KeyValue::modRevision).orElse(0L);
        long lease = kv.map(Etcd.KeyValue::lease).orElse(0L);
        Optional<LeaseRecord> record = Optional.empty();
        Optional<LeaseCorruptException> corrupt = Optional.empty();
        try {
            if (kv.isPresent()) {
                record = Optional.of(record(name, kv.get(), fenceRevision));
            }
        } catch (LeaseCorruptException e) {
            corrupt = Optional.of(e);
        }
        return remember(name, new Snapshot(record, corrupt, recordRevision, lease, fenceRevision, o.revision()));
    }

    /** The record at {@code kv}, its fence from the fence key's revision when it says 0. */
    private LeaseRecord record(String name, Etcd.KeyValue kv, long fenceRevision) throws LeaseCorruptException {
        LeaseRecord r = LeaseJson.read(name, kv.value());
        if (r.fence() == 0) {
            if (fenceRevision == 0) {
                throw new LeaseCorruptException(name, "the record says fence 0 and there is no fence key "
                        + OneLine.quote(fenceKey(name)) + ": break the lease to go on (it deletes key "
                        + OneLine.quote(recordKey(name)) + ")");
            }
            return Records.fenced(r, fenceRevision);
        }
        if (r.fence() > fenceRevision) {
            throw new LeaseCorruptException(name, "the record is at fence " + r.fence() + " but its fence key is at "
                    + fenceRevision + ": it was not written by a proclive store; break the lease to go on (it deletes"
                    + " key " + OneLine.quote(recordKey(name)) + "; the fence key keeps fences growing)");
        }
        return r;
    }

    /**
     * Remembers {@code s} as the latest known snapshot of {@code name}, unless one of a later
     * revision is known already: reads on other threads answer out of order, and a writer that
     * started from an older snapshot would judge from what has changed since.
     */
    private Snapshot remember(String name, Snapshot s) {
        if (known.size() > REMEMBERED) {
            known.clear();
        }
        known.merge(name, s, (before, now) -> now.revision() >= before.revision() ? now : before);
        return s;
    }

    @Override
    public Optional<LeaseRecord> read(String name) throws IOException {
        checkName(name);
        return snapshot(name).trusted();
    }

    /** Another writer came first: decide again from {@code now}, what the failed write read. */
    private static final class Conflict extends IOException {
        private static final long serialVersionUID = 1L;
        private final transient Snapshot now;

        Conflict(Snapshot now) {
            super(null, null);
            this.now = now;
        }
    }

    /**
     * Runs {@code work} from the latest snapshot this JVM knows of the lease, when there is one (a
     * lease released here and acquired again costs one transaction each): a write compares it, and
     * one that finds it stale reads the lease in the same call and runs {@code work} again; an
     * answer that writes nothing is never given from a remembered snapshot, only from one read now.
     */
    @Override
    public <T> T locked(String name, Locked<T> work) throws IOException {
        checkName(name);
        Snapshot s = known.get(name);
        boolean readNow = s == null;
        if (readNow) {
            s = snapshot(name);
        }
        for (int tries = 0; tries < TRIES; tries++) {
            TxnGuard guard = new TxnGuard(name, s, !readNow);
            try {
                T answer = work.run(guard);
                if (guard.wrote || readNow) {
                    return answer;
                }
                s = snapshot(name);
            } catch (Conflict again) {
                s = again.now;
            }
            readNow = true;
        }
        throw new IOException("lease " + name + " changed under " + TRIES + " writes in a row: too contended to"
                + " decide");
    }

    @Override
    public Map<String, String> environment() {
        return Map.of(ETCD_VARIABLE, etcd.endpoints(), PREFIX_VARIABLE, prefix);
    }

    @Override
    public Optional<CompletableFuture<Void>> changed(String name) {
        Snapshot last = known.get(name); // news after the revision of the latest read or write here
        return Optional.of(watch.changed(recordKey(name), last == null ? 0 : last.revision()));
    }

    @Override
    public boolean lost(String name, long fence) {
        return keepAlive.lost(name, fence);
    }

    /** Once no waiter here waits, or this JVM is gone, its tickets expire within {@link #TICKET_TTL}. */
    @Override
    public void stillWaiting(String name) throws IOException {
        ticketLease(false);
    }

    /**
     * The etcd lease for a new ticket: this JVM's, confirmed alive at most a third of its TTL ago
     * (granted anew when it expired), or, when {@code forTicket} is false, only kept alive if there is one.
     */
    private synchronized long ticketLease(boolean forTicket) throws IOException {
        long now = System.nanoTime();
        if (ticketLease != 0 && now - ticketLeaseConfirmed < TICKET_TTL.toNanos() / 3) {
            return ticketLease;
        }
        if (ticketLease != 0 && etcd.keepAlive(ticketLease) > 0) {
            ticketLeaseConfirmed = now;
            return ticketLease;
        }
        ticketLease = 0;
        if (!forTicket) {
            return 0;
        }
        // a ticket on no etcd lease would never expire: a killed waiter would hold the queue up
        ticketLease = Etcd.granted(etcd.grant(TICKET_TTL), "a waiter's ticket");
        ticketLeaseConfirmed = now;
        return ticketLease;
    }

    @Override
    public boolean keeping(String name, long fence) {
        return keepAlive.keeping(name, fence);
    }

    @Override
    public void ended(String name, long fence) {
        keepAlive.ended(name, fence);
    }

    @Override
    public void close() {
        keepAlive.stop();
        watch.close();
        etcd.close();
    }

    @Override
    public boolean expires() {
        return true;
    }

    @Override
    public void keep(Grant g) {
        keepAlive.keep(g.record(), g.session());
    }

    @Override
    public List<Grant> grants() throws IOException {
        List<Etcd.KeyValue> all = etcd.list(prefix);
        Map<String, Long> fences = new HashMap<>();
        for (Etcd.KeyValue kv : all) {
            if (kv.key().endsWith(FENCE_SUFFIX)) {
                String name = kv.key().substring(prefix.length(), kv.key().length() - FENCE_SUFFIX.length());
                fences.put(name, kv.modRevision());
            }
        }
        List<Grant> grants = new ArrayList<>();
        for (Etcd.KeyValue kv : all) {
            String name = kv.key().substring(prefix.length());
            if (name.endsWith(FENCE_SUFFIX) || kv.lease() == 0) {
                continue;
            }
            try {
                LeaseNames.checkName(name);
                LeaseRecord r = record(name, kv, fences.getOrDefault(name, 0L));
                if (r.granted()) {
                    grants.add(new Grant(r, kv.lease()));
                }
            } catch (IllegalArgumentException | LeaseCorruptException e) {
                // not a record this keeper can vouch for
            }
        }
        return grants;
    }

    private final class TxnGuard implements Guard {
        private final String name;
        private Snapshot read;
        /** Whether the snapshot is one remembered from earlier, not read for this writer. */
        private final boolean remembered;
        /** Whether a write went through: the compare proved the snapshot current. */
        boolean wrote;
        /** The waiters' keys as {@link #waiters()} last read them. */
        private Set<String> queueRead = Set.of();

        TxnGuard(String name, Snapshot read, boolean remembered) {
            this.name = name;
            this.read = read;
            this.remembered = remembered;
        }

        @Override
        public void confirm() throws IOException {
            if (remembered && !wrote) {
                throw new Conflict(snapshot(name));
            }
        }

        @Override
        public Optional<LeaseRecord> record() throws LeaseCorruptException {
            return read.trusted();
        }

        @Override
        public void remove() throws IOException {
            Etcd.Outcome o = write(List.of(new Etcd.Delete(recordKey(name)))); // the fence key stays: fences keep growing
            written(Optional.empty(), 0, read.fenceRevision(), o.revision()); // at the delete's revision, as every write
            keepAlive.drop(name);
        }

        @Override
        public long fence() {
            return read.fenceRevision();
        }

        /** The waiters, one key each, in the order their keys were created (as etcd's {@code Mutex} orders them). */
        @Override
        public List<LeaseBook.Waiter> waiters() throws IOException {
            List<Etcd.KeyValue> keys = new ArrayList<>(etcd.list(queuePrefix(name)));
            keys.sort(Comparator.comparingLong(Etcd.KeyValue::createRevision));
            List<LeaseBook.Waiter> queue = new ArrayList<>();
            queueRead = new HashSet<>();
            for (Etcd.KeyValue kv : keys) {
                queueRead.add(kv.key());
                try {
                    queue.add(LeaseJson.waiter(new String(kv.value(), StandardCharsets.UTF_8)));
                } catch (IOException notAWaiter) {
                    // not one of ours: left out, and removed with the next change of the queue
                }
            }
            return queue;
        }

        /**
         * Creates the keys of waiters new to the queue, on this JVM's tickets' etcd lease, and
         * deletes those read and no longer in it; a key another process created since the read is
         * left alone (nothing locks the queue: each waiter's key is its own).
         */
        @Override
        public void waiters(List<LeaseBook.Waiter> queue) throws IOException {
            Set<String> wanted = new LinkedHashSet<>();
            queue.forEach(w -> wanted.add(waiterKey(name, w)));
            List<Etcd.Op> ops = new ArrayList<>();
            for (String key : queueRead) {
                if (!wanted.contains(key)) {
                    ops.add(new Etcd.Delete(key));
                }
            }
            for (LeaseBook.Waiter w : queue) {
                if (!queueRead.contains(waiterKey(name, w))) {
                    ops.add(new Etcd.Put(waiterKey(name, w), LeaseJson.waiter(w).getBytes(StandardCharsets.UTF_8),
                            ticketLease(true)));
                }
            }
            if (!ops.isEmpty()) {
                etcd.txn(List.of(), ops);
            }
        }

        /**
         * A granted record stays on the etcd lease it is attached to when its TTL is unchanged
         * (refreshed first, unless this JVM keeps it alive already); otherwise it goes onto this
         * JVM's etcd lease of its TTL. An ended record is attached to none: it stays until replaced.
         */
        @Override
        public void replace(LeaseRecord r) throws IOException {
            long lease = 0;
            boolean shared = false;
            if (r.granted()) {
                lease = read.etcdLease();
                boolean sameTtl = read.record().map(old -> old.granted() && old.ttl().equals(r.ttl())).orElse(false);
                if (lease != 0 && sameTtl) {
                    if (!keepAlive.alive(lease) && etcd.keepAlive(lease) <= 0) {
                        throw new Conflict(snapshot(name)); // it expired since it was read: the record is gone
                    }
                } else {
                    lease = keepAlive.shared(r.ttl());
                    shared = true;
                }
            }
            Etcd.Outcome o;
            try {
                o = write(List.of(new Etcd.Put(recordKey(name), bytes(r), lease)));
            } finally {
                if (shared) {
                    keepAlive.answered(lease);
                }
            }
            written(Optional.of(r), lease, read.fenceRevision(), o.revision());
            if (r.granted()) {
                keepAlive.keep(r, lease);
                answeredInTime(r, lease, true);
            } else {
                keepAlive.drop(name);
            }
        }

        @Override
        public LeaseRecord grant(LeaseRecord r) throws IOException {
            long lease = keepAlive.shared(r.ttl());
            Etcd.Outcome o;
            try {
                o = write(List.of(new Etcd.Put(fenceKey(name), name.getBytes(StandardCharsets.UTF_8), 0),
                        new Etcd.Put(recordKey(name), bytes(Records.fenced(r, 0)), lease)));
            } finally {
                keepAlive.answered(lease);
            }
            long before = Math.max(read.fenceRevision(), read.revision());
            if (o.revision() <= before) {
                throw new IOException("etcd answered revision " + o.revision() + " for a write after revision "
                        + before + ": no fence can be taken from that");
            }
            LeaseRecord granted = Records.fenced(r, o.revision());
            written(Optional.of(granted), lease, o.revision(), o.revision());
            keepAlive.keep(granted, lease);
            answeredInTime(granted, lease, false);
            return granted;
        }

        /**
         * A grant whose answer came later than its etcd lease can be trusted to live (its TTL less a
         * quarter), or later than that after the write was stamped ({@code renewedAt}), is lost, said
         * now, before anyone acts on it. {@code inUse}: whether a holder may already write under the
         * fence (a renewal, a claim): its etcd lease then stays in use until it is ended here; a new
         * grant nobody was told of frees its record at once.
         */
        private void answeredInTime(LeaseRecord r, long lease, boolean inUse) throws LeaseLostException {
            boolean leaseAlive = keepAlive.alive(lease);
            if (!keepAlive.lost(r.name(), r.fence()) && !keepAlive.answeredLate(r)) { // either marks it lost
                return;
            }
            if (!inUse) {
                keepAlive.ended(r.name(), r.fence());
                free(read.recordRevision());
            }
            long ttl = r.ttl().toMillis();
            String mine = "fence " + r.fence() + " of pid " + r.holder().pid() + ": ";
            throw new LeaseLostException(name, new LeaseLost(LeaseChange.UNCONFIRMED, Optional.empty(), leaseAlive
                    ? mine + "the answer to its write came " + Duration.between(r.renewedAt(), clock.instant())
                            .toMillis() + " ms after it was sent, later than three quarters of its TTL (" + ttl
                            + " ms): a newcomer may take it any moment"
                    : mine + "the answer to its write came later than its etcd lease can be trusted to live (" + ttl
                            + " ms less a quarter): the record may be gone already"));
        }

        /**
         * Deletes the record of a grant nobody was told of, if it is still the one written at
         * {@code revision}: left, it would stay held as long as anything else keeps this JVM's etcd
         * lease alive. One that cannot be deleted now goes with its etcd lease, or is taken as any
         * other whose holder has not renewed it.
         */
        private void free(long revision) {
            try {
                Etcd.Outcome o = etcd.txn(List.of(new Etcd.Compare(recordKey(name), revision)),
                        List.of(new Etcd.Delete(recordKey(name))));
                if (o.succeeded()) {
                    written(Optional.empty(), 0, read.fenceRevision(), o.revision());
                }
            } catch (IOException | RuntimeException e) {
                // left as written: the caller is told it has no grant all the same
            }
        }

        /** Runs {@code puts} if nothing changed since the snapshot; else says what is there now, to decide from. */
        private Etcd.Outcome write(List<Etcd.Op> puts) throws IOException {
            Etcd.Outcome o;
            try {
                o = etcd.txn(List.of(new Etcd.Compare(recordKey(name), read.recordRevision()),
                        new Etcd.Compare(fenceKey(name), read.fenceRevision())), puts, reads(name));
            } catch (Etcd.LeaseNotFound gone) {
                keepAlive.forget(gone.lease());
                throw new Conflict(snapshot(name)); // this JVM's etcd lease expired under it: take a new one
            }
            if (!o.succeeded()) {
                throw new Conflict(parse(name, o));
            }
            wrote = true;
            return o;
        }

        /** Remembers {@code r} as written here at {@code revision}, on etcd lease {@code lease}; empty: deleted. */
        private void written(Optional<LeaseRecord> r, long lease, long fenceRevision, long revision) {
            read = remember(name, new Snapshot(r, Optional.empty(), r.isPresent() ? revision : 0, lease, fenceRevision,
                    revision));
        }

        /**
         * A record on an etcd lease is fresh while that etcd lease lives: until it expires as etcd
         * says now, a second on for etcd's whole seconds; one on none as its {@code renewedAt} says.
         */
        @Override
        public Instant freshUntil(LeaseRecord r) throws IOException {
            if (read.etcdLease() == 0) {
                return r.freshUntil();
            }
            long left = etcd.timeToLive(read.etcdLease());
            return left < 0 ? clock.instant() : clock.instant().plusSeconds(left + 1);
        }

        @Override
        public Optional<Instant> expiresAt() throws IOException {
            if (read.etcdLease() == 0) {
                return Optional.empty();
            }
            return Optional.of(clock.instant().plusSeconds(Math.max(0, etcd.timeToLive(read.etcdLease()))));
        }
    }

    private static byte[] bytes(LeaseRecord r) {
        return (LeaseJson.write(r) + "\n").getBytes(StandardCharsets.UTF_8);
    }
}
