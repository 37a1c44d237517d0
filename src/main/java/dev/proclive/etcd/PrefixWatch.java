package dev.proclive.etcd;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One etcd watch of a prefix for every caller waiting on a key under it, opened lazily; reopened every
 * {@value #RENEW_MS} ms from its latest change, so a connection silently cut (idle NAT or proxy) hides a change no
 * longer. State guarded by this.
 */
public final class PrefixWatch {

    private static final int REMEMBERED = 4096;
    static final long RENEW_MS = 30_000;

    private final Etcd etcd;
    private final String prefix;
    /** Told when the stream breaks: etcd may have changed under it (a member restarted, or was restored). */
    private final Runnable broke;
    /** By key, each with the revision after which a change is news. */
    private final Map<String, List<Waiting>> waiting = new HashMap<>();
    /** Each key's latest change, since {@link #coveredFrom}. */
    private final Map<String, Long> lastChange = new HashMap<>();
    /** Every change at this revision or later is in {@link #lastChange} (the stream saw it, or will). */
    private long coveredFrom;
    /** Null while there is none; {@link #generation} names the one opened last. */
    private CompletableFuture<Void> stream;
    private long generation;
    private int broken;
    private boolean closed;
    /** The latest change delivered, or the revision the first stream was opened after. */
    private long lastEvent;

    private record Waiting(CompletableFuture<Void> future, long after) {
    }

    public PrefixWatch(Etcd etcd, String prefix, Runnable broke) {
        this.etcd = etcd;
        this.prefix = prefix;
        this.broke = broke;
    }

    /**
     * Completes when {@code key} changes after {@code afterRevision}, at once when that cannot be ruled out
     * (0, or older than the stream vouches for); exceptionally when the watch breaks. Cancel to stop waiting.
     */
    public CompletableFuture<Void> changed(String key, long afterRevision) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Waiting w = new Waiting(f, afterRevision);
        synchronized (this) {
            if (closed) {
                f.completeExceptionally(new IOException("the store is closed: nothing is watched"));
                return f;
            }
            // a stream opened now starts after this caller's revision: it sees every change news to it
            if (afterRevision <= 0 || stream != null
                    && (afterRevision + 1 < coveredFrom || lastChange.getOrDefault(key, 0L) > afterRevision)) {
                f.complete(null); // nothing depends on it yet: completed under the lock, nothing runs here
                return f;
            }
            waiting.computeIfAbsent(key, k -> new ArrayList<>()).add(w);
            if (stream == null) { // one that fails at once tells this caller too
                coveredFrom = afterRevision + 1;
                lastChange.clear();
                lastEvent = afterRevision;
                start(afterRevision);
            }
        }
        f.whenComplete((v, e) -> {
            if (e instanceof CancellationException) {
                forget(key, w);
            }
        });
        return f;
    }

    private synchronized void forget(String key, Waiting w) {
        List<Waiting> ws = waiting.get(key);
        if (ws != null && ws.remove(w) && ws.isEmpty()) {
            waiting.remove(key);
        }
    }

    /** Called with the lock held. */
    private void start(long afterRevision) {
        long mine = ++generation;
        CompletableFuture<Void> s = etcd.watchPrefix(prefix, afterRevision, (revision, changes) -> seen(mine, changes));
        stream = s;
        s.whenComplete((v, e) -> ended(mine, e));
        CompletableFuture.delayedExecutor(RENEW_MS, TimeUnit.MILLISECONDS).execute(() -> renew(mine));
    }

    /** If generation {@code mine} still serves; who waits, and what it saw, stay. */
    private void renew(long mine) {
        CompletableFuture<Void> old;
        synchronized (this) {
            if (closed || mine != generation || stream == null) {
                return;
            }
            old = stream;
            start(lastEvent); // from here the old stream's answers and end are not heard
        }
        old.cancel(false);
    }

    /**
     * A read saw {@code key} as it is at {@code revision} (its record's, or the read's if it has none), changed since
     * some callers' revision: they are told, as if the stream had said it (a stream can go quiet, open but silent).
     */
    public void read(String key, long revision) {
        List<CompletableFuture<Void>> tell = new ArrayList<>();
        synchronized (this) {
            List<Waiting> ws = waiting.get(key);
            if (ws == null) {
                return;
            }
            ws.stream().filter(w -> revision > w.after()).forEach(w -> tell.add(w.future()));
            ws.removeIf(w -> revision > w.after());
            if (ws.isEmpty()) {
                waiting.remove(key);
            }
        }
        tell.forEach(f -> f.complete(null));
    }

    private void seen(long mine, List<Etcd.Change> changes) {
        List<CompletableFuture<Void>> tell = new ArrayList<>();
        synchronized (this) {
            if (mine != generation || stream == null) {
                return;
            }
            broken = 0; // the next break waits briefly again
            for (Etcd.Change c : changes) {
                if (lastChange.size() >= REMEMBERED && !lastChange.containsKey(c.key())) {
                    lastChange.clear(); // forgotten: a caller who read before this change is told at once
                    coveredFrom = c.revision() + 1; // this answer's earlier changes at its revision, too
                }
                lastChange.merge(c.key(), c.revision(), Math::max);
                lastEvent = Math.max(lastEvent, c.revision());
                List<Waiting> ws = waiting.get(c.key());
                if (ws == null) {
                    continue;
                }
                ws.stream().filter(w -> c.revision() > w.after()).forEach(w -> tell.add(w.future()));
                ws.removeIf(w -> c.revision() > w.after());
                if (ws.isEmpty()) {
                    waiting.remove(c.key());
                }
            }
        }
        tell.forEach(f -> f.complete(null));
    }

    /**
     * {@code e} null: etcd ended it as one that may have missed changes (compacted). A break is told after
     * 25 ms doubling to about 1.6 s, with jitter, so callers who ask anew do not spin.
     */
    private void ended(long mine, Throwable e) {
        List<Waiting> tell = new ArrayList<>();
        long pause;
        synchronized (this) {
            if (mine != generation || stream == null) {
                return;
            }
            stream = null;
            waiting.values().forEach(tell::addAll);
            waiting.clear();
            int jitter = 80 + ThreadLocalRandom.current().nextInt(41);
            pause = e == null ? 0 : (25L << Math.min(6, broken++)) * jitter / 100;
        }
        if (e != null) {
            broke.run();
        }
        // never on the caller's thread: it may hold what a waiter's callback needs
        CompletableFuture.delayedExecutor(pause, TimeUnit.MILLISECONDS).execute(() -> tell.forEach(w -> {
            if (e == null) {
                w.future().complete(null);
            } else {
                w.future().completeExceptionally(e);
            }
        }));
    }

    /** Callers still waiting are told (exceptionally) that nothing is watched. */
    public void close() {
        List<Waiting> tell = new ArrayList<>();
        CompletableFuture<Void> s;
        synchronized (this) {
            closed = true;
            s = stream;
            stream = null;
            waiting.values().forEach(tell::addAll);
            waiting.clear();
        }
        if (s != null) {
            s.cancel(false);
        }
        IOException why = new IOException("the store is closed: nothing is watched");
        tell.forEach(w -> w.future().completeExceptionally(why));
    }
}
