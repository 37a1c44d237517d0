package dev.proclive.lease;

import dev.proclive.etcd.Etcd;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * etcd's key space in memory, as the store sees it: one revision counter, keys with create and
 * mod revisions, leases that never expire unless {@link #expire expired} or revoked (revoking
 * deletes the keys attached), and prefix watches that hand every change under their prefix on, in order, on a thread of their own. Every
 * call counts in {@link #calls}, every put in {@link #puts}, every watch opened in {@link #watchStreams}. For the rules, on every OS; the real member is in the {@code Etcd*IT} tests.
 */
final class FakeEtcd implements Etcd {

    private final TreeMap<String, KeyValue> keys = new TreeMap<>();
    private final Map<Long, Long> leases = new java.util.HashMap<>();
    /** The prefix watches open: prefix, what they hand changes to, and their future. */
    private final List<Object[]> prefixWatches = new ArrayList<>();
    /** Where prefix watches are answered, one answer after another (never on the writer's thread, as over a network). */
    private final java.util.concurrent.ExecutorService answers = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "fake-etcd-watch");
        t.setDaemon(true);
        return t;
    });
    private long revision = 1;
    private long nextLease = 100;
    int calls;
    /** How many puts were done (in transactions or by hand). */
    final java.util.concurrent.atomic.AtomicInteger puts = new java.util.concurrent.atomic.AtomicInteger();
    /** How many prefix watches were opened. */
    final java.util.concurrent.atomic.AtomicInteger watchStreams = new java.util.concurrent.atomic.AtomicInteger();
    /** How many keep-alives were asked for. */
    final java.util.concurrent.atomic.AtomicInteger keepAlives = new java.util.concurrent.atomic.AtomicInteger();
    /** When set, open watches hand on nothing (a stream gone quiet behind a proxy), and fail not. */
    volatile boolean watchesQuiet;
    /** Keep-alives asked for, by etcd lease. */
    final Map<Long, java.util.concurrent.atomic.AtomicInteger> keepAlivesOf = new java.util.concurrent.ConcurrentHashMap<>();
    /** When set, every call fails as an unreachable member would. */
    volatile boolean down;
    /** When set, keep-alives fail as to a member cut off from its majority; other calls go through. */
    volatile boolean keepAliveDown;
    /** How late the answer to a transaction that writes under an etcd lease comes back (done at once, answered then). */
    volatile long leasedAnswerDelayMillis;

    /** When set, a read-only transaction waits until it counts down, then fails as a member that never answered. */
    volatile java.util.concurrent.CountDownLatch readsHang;
    /** Whether a read {@link #readsHang} held answers once let go (late, as behind a slow proxy), rather than fails. */
    volatile boolean hungReadsAnswer;

    private void call() throws IOException {
        calls++;
        if (down) {
            throw new IOException("no etcd member answered (fake): down");
        }
    }

    @Override
    public Outcome txn(List<Compare> compares, List<Op> ops, List<Op> otherwise) throws IOException {
        java.util.concurrent.CountDownLatch hang = readsHang;
        if (hang != null && compares.isEmpty() && ops.stream().allMatch(op -> op instanceof Get)) {
            try {
                hang.await(); // not under this object's lock: keep-alives and writes go on meanwhile
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted");
            }
            if (!hungReadsAnswer) {
                throw new IOException("no etcd member answered (fake): the read hung");
            }
        }
        Outcome o = txnNow(compares, ops, otherwise);
        long delay = leasedAnswerDelayMillis;
        if (delay > 0 && ops.stream().anyMatch(op -> op instanceof Put p && p.lease() != 0)) {
            try {
                Thread.sleep(delay); // time itself is tested: a slow answer, the write done, its caller not knowing yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted");
            }
        }
        return o;
    }

    private synchronized Outcome txnNow(List<Compare> compares, List<Op> ops, List<Op> otherwise) throws IOException {
        call();
        boolean holds = compares.stream().allMatch(c -> Optional.ofNullable(keys.get(c.key()))
                .map(KeyValue::modRevision).orElse(0L) == c.modRevision());
        List<Op> run = holds ? ops : otherwise;
        boolean writes = run.stream().anyMatch(op -> op instanceof Put || op instanceof Delete d && keys.containsKey(d.key()));
        for (Op op : run) {
            if (op instanceof Put p && p.lease() != 0 && !leases.containsKey(p.lease())) {
                throw new LeaseNotFound("etcdserver: requested lease not found", p.lease());
            }
        }
        if (writes) {
            revision++;
        }
        List<Optional<KeyValue>> reads = new ArrayList<>();
        for (Op op : run) {
            if (op instanceof Put p) {
                puts.incrementAndGet();
                KeyValue old = keys.get(p.key());
                keys.put(p.key(), new KeyValue(p.key(), p.value(), old == null ? revision : old.createRevision(), revision,
                        p.lease()));
                changed(p.key());
            } else if (op instanceof Delete d) {
                if (keys.remove(d.key()) != null) {
                    changed(d.key());
                }
            } else {
                reads.add(Optional.ofNullable(keys.get(((Get) op).key())));
            }
        }
        return new Outcome(holds, revision, reads);
    }

    @Override
    public synchronized List<KeyValue> list(String prefix) throws IOException {
        call();
        return new ArrayList<>(keys.subMap(prefix, prefix + Character.MAX_VALUE).values());
    }

    @Override
    public synchronized long grant(Duration ttl) throws IOException {
        call();
        long id = nextLease++;
        leases.put(id, Math.max(1, ttl.toSeconds()));
        return id;
    }

    @Override
    public synchronized long keepAlive(long id) throws IOException {
        call();
        keepAlives.incrementAndGet();
        keepAlivesOf.computeIfAbsent(id, i -> new java.util.concurrent.atomic.AtomicInteger()).incrementAndGet();
        if (keepAliveDown) {
            throw new IOException("no etcd member answered (fake): keep-alives fail");
        }
        return leases.getOrDefault(id, 0L);
    }

    @Override
    public synchronized long timeToLive(long id) throws IOException {
        call();
        return leases.getOrDefault(id, -1L);
    }

    @Override
    public synchronized Optional<java.util.Set<String>> attached(long id) throws IOException {
        call();
        java.util.Set<String> on = new java.util.HashSet<>();
        keys.values().stream().filter(kv -> kv.lease() == id).forEach(kv -> on.add(kv.key()));
        return Optional.of(on);
    }

    @Override
    public synchronized void revoke(long id) throws IOException {
        call();
        expire(id);
    }

    /** Etcd lease {@code id} ends: the keys attached to it are deleted. */
    synchronized void expire(long id) {
        if (leases.remove(id) == null) {
            return;
        }
        List<KeyValue> attached = keys.values().stream().filter(kv -> kv.lease() == id).toList();
        if (!attached.isEmpty()) {
            revision++; // the deletions' revision
        }
        for (KeyValue kv : attached) {
            keys.remove(kv.key());
            changed(kv.key());
        }
    }

    /** The key as stored, or empty. */
    synchronized Optional<KeyValue> get(String key) {
        return Optional.ofNullable(keys.get(key));
    }

    /** Writes {@code value} at {@code key} by hand (attached to what it was attached to), as an operator might. */
    synchronized void put(String key, String value) {
        puts.incrementAndGet();
        revision++;
        KeyValue old = keys.get(key);
        keys.put(key, new KeyValue(key, value.getBytes(StandardCharsets.UTF_8), old == null ? revision : old.createRevision(),
                revision, old == null ? 0 : old.lease()));
        changed(key);
    }

    /** Moves the revision counter on to at least {@code r}, as writes to other keys would. */
    synchronized void advanceTo(long r) {
        revision = Math.max(revision, r);
    }

    /**
     * Hands on every change under {@code prefix} from now; a key already changed after
     * {@code afterRevision} is handed on first (a deletion since then is not: no history is kept).
     */
    @Override
    public synchronized CompletableFuture<Void> watchPrefix(String prefix, long afterRevision, Changes changes) {
        watchStreams.incrementAndGet();
        CompletableFuture<Void> f = new CompletableFuture<>();
        List<Change> since = new ArrayList<>();
        for (KeyValue kv : keys.subMap(prefix, prefix + Character.MAX_VALUE).values()) {
            if (kv.modRevision() > afterRevision) {
                since.add(new Change(kv.key(), kv.modRevision()));
            }
        }
        since.sort(java.util.Comparator.comparingLong(Change::revision));
        long at = revision;
        if (down) {
            answers.execute(() -> f.completeExceptionally(new IOException("no etcd member answered (fake): down")));
            return f;
        }
        prefixWatches.add(new Object[] {prefix, changes, f});
        f.whenComplete((v, e) -> {
            synchronized (this) {
                prefixWatches.removeIf(w -> w[2] == f);
            }
        });
        answers.execute(() -> {
            if (!f.isDone()) {
                changes.seen(at, since);
            }
        });
        return f;
    }

    /** Breaks every prefix watch open, as a member that goes away does. */
    @SuppressWarnings("unchecked")
    synchronized void breakWatches() {
        for (Object[] w : new ArrayList<>(prefixWatches)) {
            CompletableFuture<Void> f = (CompletableFuture<Void>) w[2];
            answers.execute(() -> f.completeExceptionally(new IOException("the watch ended (fake)")));
        }
    }

    @SuppressWarnings("unchecked")
    private void changed(String key) {
        if (watchesQuiet) {
            return;
        }
        for (Object[] w : prefixWatches) {
            if (key.startsWith((String) w[0])) {
                Changes to = (Changes) w[1];
                CompletableFuture<Void> f = (CompletableFuture<Void>) w[2];
                Change c = new Change(key, revision);
                answers.execute(() -> {
                    if (!f.isDone()) {
                        to.seen(c.revision(), List.of(c));
                    }
                });
            }
        }
    }

    @Override
    public String endpoints() {
        return "http://fake-" + instance + ":2379"; // each fake a cluster of its own, as the JVM's stores tell them apart
    }

    private static final java.util.concurrent.atomic.AtomicLong INSTANCES = new java.util.concurrent.atomic.AtomicLong();
    private final long instance = INSTANCES.incrementAndGet();

    @Override
    public void close() {
    }
}
