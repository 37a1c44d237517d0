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
import dev.proclive.etcd.PrefixWatch;
import dev.proclive.text.OneLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records in etcd, unlocked: a writer reads a lease's two keys at one revision, then writes one transaction comparing
 * both {@code mod_revision}s, deciding anew if another came first. Reads are linearizable: a member cut off from its
 * majority answers nothing, so nothing is granted. Grants sit on this JVM's etcd leases, kept by {@link EtcdKeepAlive}.
 */
public final class EtcdBook implements LeaseBook {

    /** Its key, never leased nor deleted, each grant writes: the fence is its {@code mod_revision}, which only grows. */
    private static final String FENCE_SUFFIX = ".fence";
    private static final int TRIES = 64;
    private static final Duration TICKET_TTL = Duration.ofSeconds(10);
    private static final int REMEMBERED = 4096;

    /** Comma-separated (never a password). */
    public static final String ETCD_VARIABLE = "PROCLIVE_LEASE_ETCD";
    public static final String PREFIX_VARIABLE = "PROCLIVE_LEASE_PREFIX";

    private final Etcd etcd;
    private final String prefix;
    private final Clock clock;
    private final EtcdKeepAlive keepAlive;
    private final PrefixWatch watch;
    /** Per cluster, prefix and user: a ticket two stores share lives while either waits, whichever wrote it last. */
    private static final Map<String, TicketLease> TICKET_LEASES = new ConcurrentHashMap<>();
    /** Taken once etcd has answered: by its {@link #place}, so stores that spell one cluster two ways share it. */
    private volatile TicketLease tickets;
    private final String user;
    /** Watches start from these revisions; one forgotten is read again, so all may be forgotten at once. */
    private final Map<String, Snapshot> known = new ConcurrentHashMap<>();

    public EtcdBook(Etcd etcd, String prefix, Clock clock) {
        this(etcd, prefix, clock, "");
    }

    /** {@code user}: etcd login ({@code ""}: none); tickets of one JVM, user, cluster, prefix share an etcd lease. */
    public EtcdBook(Etcd etcd, String prefix, Clock clock, String user) {
        this.etcd = etcd;
        this.prefix = prefix;
        this.clock = clock;
        this.keepAlive = new EtcdKeepAlive(etcd, "proclive-etcd-keepalive " + prefix, clock, this::recordKey, this::reread);
        this.watch = new PrefixWatch(etcd, prefix, keepAlive::unsure);
        this.user = user;
    }

    /**
     * A kept record that left its etcd lease, read again: its parse sees a move; a record ended or granted again is
     * told to who waits on it, as the watch would have (one gone quiet does not), and is kept no more.
     */
    private void reread(String name) {
        try {
            Snapshot s = snapshot(name);
            long at = s.recordRevision() != 0 ? s.recordRevision() : s.revision(); // a corrupt record's is its own
            watch.read(recordKey(name), at);
            if (s.corrupt().isEmpty()) {
                keepAlive.readAgain(name, s.record(), at);
            }
        } catch (IOException | RuntimeException e) {
            // read again at the next round
        }
    }

    private TicketLease tickets() {
        TicketLease t = tickets;
        if (t == null) {
            t = TICKET_LEASES.computeIfAbsent(place() + "\n" + user, place -> new TicketLease());
            if (etcd.cluster().isPresent()) {
                tickets = t;
            }
        }
        return t;
    }

    /** Guarded by itself. Confirmed through another store's client, etcd is asked again before a write under it. */
    private static final class TicketLease {
        long id;
        long confirmed;
        java.lang.ref.WeakReference<Etcd> by = new java.lang.ref.WeakReference<>(null);
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

    private String queuePrefix(String name) {
        return prefix + name + ".queue/";
    }

    /** One per holder-to-be and waiting process, on any machine: two waiting for one holder each keep their place. */
    private String waiterKey(String name, LeaseBook.Waiter w) {
        return queuePrefix(name) + Records.digest(processId(w.who()) + "\n" + processId(w.by())).substring(0, 32);
    }

    private static String processId(Identity p) {
        return p.pid() + "\n" + p.start() + "\n" + p.boot() + "\n" + p.host() + "\n" + p.machine();
    }

    /** What makes a ticket one: its holder-to-be and its waiting process, as {@link Records#sameProcess} tells them. */
    private static String ticketId(LeaseBook.Waiter w) {
        return processId(w.who()) + "\n" + w.who().pidns() + "\n" + processId(w.by()) + "\n" + w.by().pidns();
    }

    /** Whether {@code key} is a ticket of lease {@code name}, not a key of another prefix nested below the queue. */
    private boolean isWaiterKey(String name, String key) {
        String queue = queuePrefix(name);
        return key.length() == queue.length() + 32 && key.startsWith(queue) && Records.isToken(key.substring(queue.length()));
    }

    /** Both keys of a lease read at one revision; 0 for an absent key's revision or no etcd lease. */
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

    /** {@code o} answers {@link #reads}. */
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
        Snapshot s = remember(name, new Snapshot(record, corrupt, recordRevision, lease, fenceRevision, o.revision()));
        record.ifPresent(r -> keepAlive.moved(r, lease, recordRevision)); // renewed elsewhere, onto another etcd lease
        return s;
    }

    /** A new grant's JSON says fence 0 (its revision is unknown before commit): the fence key's revision is it. */
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

    /** The later revision wins: reads on other threads answer out of order, and writers start from these. */
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

    /** Another writer came first: decide again from {@code now}, which the failed write read. */
    private static final class Conflict extends IOException {
        private static final long serialVersionUID = 1L;
        private final transient Snapshot now;

        Conflict(Snapshot now) {
            super(null, null);
            this.now = now;
        }
    }

    /**
     * Starts from a remembered snapshot when there is one (a write's compare catches a stale one), but an answer that
     * writes nothing is never given from it: the lease is read now and {@code work} runs again.
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

    /** Its cluster's id once an answer named it (127.0.0.1 and localhost are one place); else as spelled. */
    @Override
    public String place() {
        return etcd.cluster().map(id -> "etcd cluster " + id + " " + prefix).orElseGet(LeaseBook.super::place);
    }

    @Override
    public Optional<CompletableFuture<Void>> changed(String name) {
        Snapshot last = known.get(name);
        return Optional.of(watch.changed(recordKey(name), last == null ? 0 : last.revision()));
    }

    @Override
    public boolean lost(String name, long fence) {
        return keepAlive.lost(name, fence);
    }

    @Override
    public Optional<String> lostBecause(String name, long fence) {
        return keepAlive.lostBecause(name, fence);
    }

    /** Once no waiter of this JVM waits here, or this JVM is gone, its tickets expire within {@link #TICKET_TTL}. */
    @Override
    public void stillWaiting(String name) throws IOException {
        ticketLease(false);
    }

    /** Confirmed alive at most a third of its TTL ago; granted anew only {@code forTicket}, else 0 when gone. */
    private long ticketLease(boolean forTicket) throws IOException {
        TicketLease tickets = tickets();
        synchronized (tickets) {
            long now = System.nanoTime();
            if (tickets.id != 0 && tickets.by.get() == etcd && now - tickets.confirmed < TICKET_TTL.toNanos() / 3) {
                return tickets.id;
            }
            if (tickets.id == 0 || etcd.keepAlive(tickets.id) <= 0) {
                tickets.id = 0;
                if (!forTicket) {
                    return 0;
                }
                // a ticket on no etcd lease would never expire: a killed waiter would hold the queue up
                tickets.id = Etcd.granted(etcd.grant(TICKET_TTL), "a waiter's ticket");
            }
            tickets.confirmed = now;
            tickets.by = new java.lang.ref.WeakReference<>(etcd);
            return tickets.id;
        }
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
        keepAlive.keep(g.record(), g.session(), 0);
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
                    keepAlive.moved(r, kv.lease(), kv.modRevision()); // a kept grant renewed elsewhere
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
        private final boolean remembered;
        /** Whether a write went through: the compare proved the snapshot current. */
        boolean wrote;
        /** Whether a write's answer was lost (a timeout, an interrupt): it may have gone through. */
        private boolean unsure;
        /** The queue's tickets as last read, by key: one is written again only if changed. */
        private Map<String, LeaseBook.Waiter> queueRead = Map.of();

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

        /** A grant writes record and fence key in one transaction: a write since (granted again) moved the record's. */
        @Override
        public boolean stillAsGranted(LeaseRecord granted) throws IOException {
            return Guard.super.stillAsGranted(granted) && read.recordRevision() == read.fenceRevision();
        }

        /** After a write whose answer was lost, as etcd has it now: a grant nobody was told of is ended so. */
        @Override
        public Optional<LeaseRecord> record() throws IOException {
            if (unsure) {
                read = snapshot(name);
                unsure = false;
            }
            return read.trusted();
        }

        @Override
        public void remove() throws IOException {
            Etcd.Outcome o = write(List.of(new Etcd.Delete(recordKey(name)))); // fence key stays: fences keep growing
            written(Optional.empty(), 0, read.fenceRevision(), o.revision()); // the delete's revision: older reads lose
            keepAlive.drop(name);
        }

        @Override
        public long fence() {
            return read.fenceRevision();
        }

        /** In the order their keys were created, as etcd's {@code Mutex} orders them. */
        @Override
        public List<LeaseBook.Waiter> waiters() throws IOException {
            List<Etcd.KeyValue> keys = new ArrayList<>(etcd.list(queuePrefix(name)));
            keys.sort(Comparator.comparingLong(Etcd.KeyValue::createRevision));
            List<LeaseBook.Waiter> queue = new ArrayList<>();
            queueRead = new LinkedHashMap<>(); // in the order the keys were made: a ticket read twice keeps the first
            for (Etcd.KeyValue kv : keys) {
                if (!isWaiterKey(name, kv.key())) {
                    continue; // another store's, whose prefix lies below this queue's: never read, never removed
                }
                try {
                    LeaseBook.Waiter w = LeaseJson.waiter(new String(kv.value(), StandardCharsets.UTF_8));
                    queue.add(w);
                    queueRead.put(kv.key(), w);
                } catch (IOException notAWaiter) {
                    // not a ticket (a record of a lease whose name looks like one, of a nested prefix): left alone
                }
            }
            return queue;
        }

        /**
         * A key made since the read is left alone: nothing locks the queue, each waiter's key is its own. A ticket
         * changed in place keeps the key it was read from (an older version's too), so its place (key creation) too.
         */
        @Override
        public void waiters(List<LeaseBook.Waiter> queue) throws IOException {
            Map<String, String> readKeys = new HashMap<>();
            queueRead.forEach((key, w) -> readKeys.putIfAbsent(ticketId(w), key));
            List<String> keys = queue.stream()
                    .map(w -> readKeys.getOrDefault(ticketId(w), waiterKey(name, w))).toList();
            Set<String> wanted = new LinkedHashSet<>(keys);
            List<Etcd.Op> ops = new ArrayList<>();
            for (String key : queueRead.keySet()) {
                if (!wanted.contains(key)) {
                    ops.add(new Etcd.Delete(key));
                }
            }
            for (int i = 0; i < queue.size(); i++) {
                LeaseBook.Waiter w = queue.get(i);
                String key = keys.get(i);
                if (!queueRead.containsKey(key) || !w.equals(queueRead.get(key))) {
                    ops.add(new Etcd.Put(key, LeaseJson.waiter(w).getBytes(StandardCharsets.UTF_8), ticketLease(true)));
                }
            }
            if (!ops.isEmpty()) {
                etcd.txn(List.of(), ops);
            }
        }

        /** Granted at an unchanged TTL it keeps its etcd lease, else takes this JVM's; an ended record has none. */
        @Override
        public void replace(LeaseRecord r) throws IOException {
            byte[] bytes = LeaseJson.stored(r); // before any etcd lease is taken for it
            long lease = 0;
            boolean shared = false;
            if (r.granted()) {
                lease = read.etcdLease();
                boolean sameTtl = read.record().map(old -> old.granted() && old.ttl().equals(r.ttl())).orElse(false);
                if (lease != 0 && sameTtl) {
                    if (!keepAlive.leases().alive(lease) && etcd.keepAlive(lease) <= 0) {
                        throw new Conflict(snapshot(name)); // it expired since it was read: the record is gone
                    }
                } else {
                    Duration least = outlived();
                    lease = keepAlive.leases().shared(r.ttl().compareTo(least) >= 0 ? r.ttl() : least, least);
                    shared = true;
                }
            }
            Etcd.Outcome o;
            Instant sent = clock.instant();
            try {
                o = write(List.of(new Etcd.Put(recordKey(name), bytes, lease)));
            } finally {
                if (shared) {
                    keepAlive.leases().answered(lease);
                }
            }
            written(Optional.of(r), lease, read.fenceRevision(), o.revision());
            if (r.granted()) {
                keepAlive.keep(r, lease, o.revision());
                answeredInTime(r, lease, true, sent);
            } else {
                keepAlive.drop(name);
            }
        }

        /**
         * How long the record must last when it moves off an etcd lease this JVM does not keep (a renewal elsewhere,
         * {@code lease renew --ttl}): as long as that lease would have (its time left, the record's TTL), so a holder
         * that keeps it and is cut off before it reads the move is told lost before the record goes. Zero otherwise.
         */
        private Duration outlived() throws IOException {
            long from = read.etcdLease();
            Optional<LeaseRecord> old = read.record().filter(LeaseRecord::granted);
            if (from == 0 || old.isEmpty() || keepAlive.leases().alive(from)) {
                return Duration.ZERO;
            }
            Duration least = old.get().ttl();
            long left = etcd.timeToLive(from);
            if (left >= 0 && Duration.ofSeconds(left + 1).compareTo(least) > 0) {
                least = Duration.ofSeconds(left + 1); // etcd's whole seconds
            }
            return least;
        }

        @Override
        public LeaseRecord grant(LeaseRecord r) throws IOException {
            byte[] bytes = LeaseJson.stored(Records.fenced(r, 0));
            long lease = keepAlive.leases().shared(r.ttl());
            Etcd.Outcome o;
            Instant sent = clock.instant();
            try {
                o = write(List.of(new Etcd.Put(fenceKey(name), name.getBytes(StandardCharsets.UTF_8), 0),
                        new Etcd.Put(recordKey(name), bytes, lease)));
            } finally {
                keepAlive.leases().answered(lease);
            }
            long before = Math.max(read.fenceRevision(), read.revision());
            if (o.revision() <= before) {
                throw new IOException("etcd answered revision " + o.revision() + " for a write after revision "
                        + before + ": no fence can be taken from that");
            }
            LeaseRecord granted = Records.fenced(r, o.revision());
            written(Optional.of(granted), lease, o.revision(), o.revision());
            keepAlive.keep(granted, lease, o.revision());
            answeredInTime(granted, lease, false, sent);
            return granted;
        }

        /**
         * Lost before anyone acts on it if answered later than its etcd lease is trusted to live (TTL less a quarter),
         * or that long after {@code sent} or an earlier {@code renewedAt} (a takeover's may be ahead). If {@code inUse}
         * its lease stays until ended, as its holder may already write under the fence; else the record is freed.
         */
        private void answeredInTime(LeaseRecord r, long lease, boolean inUse, Instant sent) throws LeaseLostException {
            boolean leaseAlive = keepAlive.leases().alive(lease);
            Instant from = r.renewedAt().isBefore(sent) ? r.renewedAt() : sent;
            if (!keepAlive.lost(r.name(), r.fence()) && !keepAlive.answeredLate(r, from)) { // either marks it lost
                return;
            }
            if (!inUse) {
                keepAlive.ended(r.name(), r.fence());
                free(read.recordRevision());
            }
            long ttl = r.ttl().toMillis();
            String mine = "fence " + r.fence() + " of pid " + r.holder().pid() + ": ";
            throw new LeaseLostException(name, new LeaseLost(LeaseChange.UNCONFIRMED, Optional.empty(), leaseAlive
                    ? mine + "the answer to its write came " + Duration.between(from, clock.instant())
                            .toMillis() + " ms after it was sent, later than three quarters of its TTL (" + ttl
                            + " ms): a newcomer may take it any moment"
                    : mine + "the answer to its write came later than its etcd lease can be trusted to live (" + ttl
                            + " ms less a quarter): the record may be gone already"));
        }

        /** Left, a grant nobody was told of would stay held while anything keeps this JVM's etcd lease alive. */
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

        /** Compared with the snapshot: a stale one throws what is there now, to decide from. */
        private Etcd.Outcome write(List<Etcd.Op> puts) throws IOException {
            Etcd.Outcome o;
            try {
                o = etcd.txn(List.of(new Etcd.Compare(recordKey(name), read.recordRevision()),
                        new Etcd.Compare(fenceKey(name), read.fenceRevision())), puts, reads(name));
            } catch (Etcd.LeaseNotFound gone) {
                keepAlive.forget(gone.lease());
                throw new Conflict(snapshot(name)); // this JVM's etcd lease expired under it: take a new one
            } catch (IOException lost) {
                unsure = true;
                throw lost;
            }
            if (!o.succeeded()) {
                OptionalLong made = madeAlready(puts, o.reads());
                if (made.isEmpty()) {
                    throw new Conflict(parse(name, o));
                }
                o = new Etcd.Outcome(true, made.getAsLong(), o.reads());
            }
            wrote = true;
            return o;
        }

        /**
         * The revision at which every put of {@code puts} stands as written, or empty: this write went through on a
         * member whose answer was lost (the call went on to the next member, whose compare failed on it), and is this
         * caller's, not a conflict. The record's bytes name its writer and time to the millisecond; a grant's fence key
         * was written in the same transaction. A delete cannot be told from another's.
         */
        private OptionalLong madeAlready(List<Etcd.Op> puts, List<Optional<Etcd.KeyValue>> now) {
            long at = 0;
            boolean record = false;
            for (Etcd.Op op : puts) {
                if (!(op instanceof Etcd.Put p) || now.size() < 2) {
                    return OptionalLong.empty();
                }
                boolean isRecord = p.key().equals(recordKey(name));
                record |= isRecord;
                Optional<Etcd.KeyValue> kv = isRecord ? now.get(0) : p.key().equals(fenceKey(name)) ? now.get(1)
                        : Optional.empty();
                if (kv.isEmpty() || !java.util.Arrays.equals(kv.get().value(), p.value()) || kv.get().lease() != p.lease()
                        || (at != 0 && kv.get().modRevision() != at)) {
                    return OptionalLong.empty();
                }
                at = kv.get().modRevision();
            }
            return record && at > 0 ? OptionalLong.of(at) : OptionalLong.empty();
        }

        /** {@code r} empty: deleted. */
        private void written(Optional<LeaseRecord> r, long lease, long fenceRevision, long revision) {
            read = remember(name, new Snapshot(r, Optional.empty(), r.isPresent() ? revision : 0, lease, fenceRevision,
                    revision));
        }

        /** Not rewritten to stay alive: fresh while its etcd lease lives, plus 1 s for etcd's whole seconds. */
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

}
