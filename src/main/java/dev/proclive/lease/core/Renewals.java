package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeaseRecord;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The grants a store keeps: each is renewed every third of its TTL on one daemon thread
 * ({@code proclive-lease-renew}, made with the first), and looked at on another
 * ({@code proclive-lease-look}, never behind a renewal that waits for an answer) often enough that
 * its loss is known within a second — a directory's record read every {@value #LOOK_MS} ms, an etcd record when its
 * watch says it changed, and the book asked whether its keep-alive went unconfirmed. A grant is
 * kept until it is released or handed off here, found lost, replaced by another grant of the same
 * name here, or the store is closed; the renewal of one whose holder ended stops at once, and its
 * loss ({@link LeaseLost.Why#HOLDER_DIED}) is still told. A renewal that fails for a while is tried
 * again the next period.
 */
final class Renewals {

    /** How often a kept grant's record in a directory is read, and an etcd one's keep-alive asked about. */
    static final long LOOK_MS = 250;

    private final Grants grants;
    /** The grant kept for each lease name. */
    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    /**
     * What this JVM knows of each grant's loss, by grant: held weakly, so that a grant whose leases
     * are all gone leaves nothing behind (each lease holds its own future).
     */
    private final Map<Grant, java.lang.ref.WeakReference<CompletableFuture<LeaseLost>>> losses = new ConcurrentHashMap<>();
    private volatile ScheduledExecutorService thread;
    /** Where the looks run: never behind a renewal that waits for an answer. */
    private volatile ScheduledExecutorService looker;
    private volatile boolean closed;

    Renewals(Grants grants) {
        this.grants = grants;
    }

    /** One grant: lease {@code name} at {@code fence} for {@code holder}. */
    private record Grant(String name, long fence, Identity holder) {
    }

    /** A grant kept here: its renewal, its look, and (etcd) the watch on its record. */
    private static final class Kept {
        final Grant grant;
        volatile ScheduledFuture<?> renewal;
        volatile ScheduledFuture<?> look;
        volatile CompletableFuture<Void> watch;

        Kept(Grant grant) {
            this.grant = grant;
        }

        void cancel() {
            ScheduledFuture<?> r = renewal;
            ScheduledFuture<?> l = look;
            CompletableFuture<Void> w = watch;
            if (r != null) {
                r.cancel(false);
            }
            if (l != null) {
                l.cancel(false);
            }
            if (w != null) {
                w.cancel(false);
            }
        }
    }

    /** Keeps {@code granted} from now on; a record that is not granted, or a closed store, is not kept. */
    void keep(LeaseRecord granted) {
        if (closed || !granted.granted()) {
            return;
        }
        long period = Math.max(10, granted.ttl().toMillis() / 3);
        Kept k = new Kept(new Grant(granted.name(), granted.fence(), granted.holder()));
        ScheduledExecutorService t = thread();
        k.renewal = t.scheduleAtFixedRate(() -> renewOnce(k), period, period, TimeUnit.MILLISECONDS);
        k.look = looker().scheduleWithFixedDelay(() -> look(k, !grants.expires()), LOOK_MS, LOOK_MS,
                TimeUnit.MILLISECONDS);
        Kept before = kept.put(granted.name(), k);
        if (before != null) {
            before.cancel();
        }
        losses.values().removeIf(ref -> ref.get() == null); // of leases nobody holds any more
        if (grants.expires()) {
            watch(k);
        }
    }

    /**
     * Completes with the grant's loss the moment this JVM knows it; never, for a grant released or
     * handed off here. The same future for every lease of one grant while one of them holds it.
     */
    CompletableFuture<LeaseLost> lost(String name, long fence, Identity holder) {
        // held strongly here until returned: a weak reference alone may be cleared before the caller has it
        java.util.concurrent.atomic.AtomicReference<CompletableFuture<LeaseLost>> found = new java.util.concurrent.atomic.AtomicReference<>();
        losses.compute(new Grant(name, fence, holder), (g, ref) -> {
            CompletableFuture<LeaseLost> known = ref == null ? null : ref.get();
            found.set(known != null ? known : new CompletableFuture<>());
            return known != null ? ref : new java.lang.ref.WeakReference<>(found.get());
        });
        return found.get();
    }

    /** The grant is lost as {@code why} says: its loss is told (unless it was released here), and it is no longer kept. */
    void found(String name, long fence, Identity holder, LeaseLost why) {
        java.lang.ref.WeakReference<CompletableFuture<LeaseLost>> ref = losses.get(new Grant(name, fence, holder));
        CompletableFuture<LeaseLost> f = ref == null ? null : ref.get();
        if (f != null) {
            f.complete(why);
        }
        forget(name, fence, holder);
    }

    /** The grant is no longer renewed (its holder ended), though its loss is still told. */
    void stopRenewing(String name, long fence, Identity holder) {
        Kept k = kept.get(name);
        if (k != null && k.grant.equals(new Grant(name, fence, holder))) {
            k.renewal.cancel(false);
        }
    }

    /** Looks at the grant's record now, and tells its loss if it shows one (its end, the carrier it went to). */
    void lookNow(String name, long fence, Identity holder) {
        look(new Kept(new Grant(name, fence, holder)), true);
    }

    /** The grant is released or handed off here: no longer kept, and its loss never told. */
    void release(String name, long fence, Identity holder) {
        losses.remove(new Grant(name, fence, holder));
        forget(name, fence, holder);
    }

    /**
     * A release that did not release the grant (it was lost before, or the write failed): its loss,
     * {@code lost}, is told after all.
     */
    void unreleased(String name, long fence, Identity holder, CompletableFuture<LeaseLost> lost) {
        losses.putIfAbsent(new Grant(name, fence, holder), new java.lang.ref.WeakReference<>(lost));
        lookNow(name, fence, holder);
    }

    /** The grant is no longer kept. */
    private void forget(String name, long fence, Identity holder) {
        Kept k = kept.get(name);
        if (k != null && k.grant.equals(new Grant(name, fence, holder)) && kept.remove(name, k)) {
            k.cancel();
        }
    }

    private synchronized ScheduledExecutorService thread() {
        if (thread == null) {
            thread = daemon("proclive-lease-renew");
        }
        return thread;
    }

    private synchronized ScheduledExecutorService looker() {
        if (looker == null) {
            looker = daemon("proclive-lease-look");
        }
        return looker;
    }

    /**
     * One daemon thread called {@code name}, running what is scheduled on it; a cancelled task is
     * dropped at once. A task survives what it throws: a {@link ScheduledThreadPoolExecutor} never
     * runs a periodic task again once a run threw, so each run is {@linkplain #surviving guarded}
     * (an {@code OutOfMemoryError} the application lives through, an {@code AssertionError}, a
     * listener's mistake), and the next run comes as scheduled.
     */
    static ScheduledExecutorService daemon(String name) {
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        }) {
            @Override
            public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
                return super.schedule(surviving(task), delay, unit);
            }

            @Override
            public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, long initialDelay, long period, TimeUnit unit) {
                return super.scheduleAtFixedRate(surviving(task), initialDelay, period, unit);
            }

            @Override
            public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long initialDelay, long delay, TimeUnit unit) {
                return super.scheduleWithFixedDelay(surviving(task), initialDelay, delay, unit);
            }

            @Override
            public void execute(Runnable task) {
                super.execute(surviving(task));
            }
        };
        pool.setRemoveOnCancelPolicy(true);
        return pool;
    }

    /**
     * {@code task}, run so that nothing it throws ends the thread's work: what a run throws is
     * dropped and the next run comes.
     */
    static Runnable surviving(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable e) {
                // one run's failure: the next run is the retry (a grant not confirmed meanwhile is said lost)
            }
        };
    }

    private void renewOnce(Kept k) {
        Grant g = k.grant;
        try {
            grants.renew(g.name(), g.fence(), Optional.of(g.holder()));
        } catch (LeaseLostException e) {
            found(g.name(), g.fence(), g.holder(), e.lost());
        } catch (IOException | RuntimeException e) {
            // tried again next period; a grant not confirmed for 3/4 of its TTL is said lost by the book
        }
    }

    /** Asks the book whether the grant went unconfirmed, and when {@code read}, what its record says now. */
    private void look(Kept k, boolean read) {
        Grant g = k.grant;
        if (grants.unconfirmed(g.name(), g.fence())) {
            found(g.name(), g.fence(), g.holder(), Losses.unconfirmed(g.fence(), Optional.of(g.holder())));
            return;
        }
        if (!read) {
            return;
        }
        Optional<LeaseRecord> now;
        try {
            now = grants.read(g.name());
        } catch (IOException | RuntimeException e) {
            return; // cannot tell now (a corrupt record is a lost one only once a writer proves it): next look
        }
        if (now.isPresent() && now.get().granted() && now.get().fence() == g.fence()
                && LeaseRules.sameProcess(now.get().holder(), g.holder())) {
            return;
        }
        Losses.of(g.fence(), Optional.of(g.holder()), now, grants.expires())
                .ifPresent(why -> found(g.name(), g.fence(), g.holder(), why));
    }

    /** An etcd record is read when its watch says it changed, and watched again while kept. */
    private void watch(Kept k) {
        Optional<CompletableFuture<Void>> changed = grants.changed(k.grant.name());
        if (changed.isEmpty()) {
            return;
        }
        k.watch = changed.get();
        changed.get().whenComplete((v, e) -> {
            if (closed || kept.get(k.grant.name()) != k) {
                return;
            }
            try {
                thread().schedule(() -> {
                    try {
                        look(k, true);
                    } finally {
                        if (kept.get(k.grant.name()) == k) {
                            watch(k); // whatever the look met, the next change is watched for
                        }
                    }
                }, e == null ? 0 : 1000, TimeUnit.MILLISECONDS); // a broken watch is asked again after a pause
            } catch (java.util.concurrent.RejectedExecutionException closedNow) {
                // the store was closed
            }
        });
    }

    /** Keeps nothing more; the thread ends. Losses not yet known are never told. */
    void close() {
        closed = true;
        kept.values().forEach(Kept::cancel);
        kept.clear();
        for (ScheduledExecutorService pool : new ScheduledExecutorService[] {thread, looker}) {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
    }
}
