package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeaseRecord;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The grants a store renews, every third of each one's TTL, on one daemon thread
 * ({@code proclive-lease-renew}, made with the first): a lease this JVM holds keeps itself until it
 * is released, ended, found lost, replaced by another grant of the same name here, or the store is
 * closed. A renewal that fails for a while is tried again the next period; one that finds the grant
 * lost stops, and {@link #foundLost} says so.
 */
final class Renewals {

    private final Grants grants;
    /** The grant renewed for each lease name. */
    private final Map<String, Renewal> renewals = new ConcurrentHashMap<>();
    /** The fence of each lease whose renewal found it lost, by name. */
    private final Map<String, Long> lost = new ConcurrentHashMap<>();
    private volatile ScheduledExecutorService renewer;
    private volatile boolean closed;

    Renewals(Grants grants) {
        this.grants = grants;
    }

    /** A renewal of the grant at {@code fence}. */
    private record Renewal(long fence, ScheduledFuture<?> task) {
    }

    /** Renews {@code granted} from now on; a grant that is not granted, or a closed store, is not renewed. */
    void keep(LeaseRecord granted) {
        if (closed || !granted.granted()) {
            return;
        }
        long period = Math.max(10, granted.ttl().toMillis() / 3);
        String name = granted.name();
        long fence = granted.fence();
        Identity holder = granted.holder();
        lost.remove(name);
        Renewal next = new Renewal(fence, renewer().scheduleAtFixedRate(() -> renewOnce(name, fence, holder),
                period, period, TimeUnit.MILLISECONDS));
        Renewal before = renewals.put(name, next);
        if (before != null && before.task() != next.task()) {
            before.task().cancel(false);
        }
    }

    private synchronized ScheduledExecutorService renewer() {
        if (renewer == null) {
            ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1, r -> {
                Thread t = new Thread(r, "proclive-lease-renew");
                t.setDaemon(true);
                return t;
            });
            pool.setRemoveOnCancelPolicy(true);
            renewer = pool;
        }
        return renewer;
    }

    private void renewOnce(String name, long fence, Identity holder) {
        try {
            grants.renew(name, fence, Optional.of(holder));
        } catch (LeaseLostException e) {
            lost.put(name, fence);
            stop(name, fence);
        } catch (IOException | RuntimeException e) {
            // tried again next period; a grant not confirmed for 3/4 of its TTL is said lost by the book
        }
    }

    /** The grant at {@code fence} of lease {@code name} is no longer renewed. */
    void stop(String name, long fence) {
        Renewal r = renewals.get(name);
        if (r != null && r.fence() == fence && renewals.remove(name, r)) {
            r.task().cancel(false);
        }
    }

    /** Whether a renewal found the grant at {@code fence} of lease {@code name} lost. */
    boolean foundLost(String name, long fence) {
        Long found = lost.get(name);
        return found != null && found == fence;
    }

    /** Renews nothing more; the thread ends. */
    void close() {
        closed = true;
        renewals.values().forEach(r -> r.task().cancel(false));
        renewals.clear();
        ScheduledExecutorService pool = renewer;
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
