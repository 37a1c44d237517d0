package dev.proclive;

import dev.proclive.spi.internal.ExitEvents;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Watches identities for their end with one daemon thread, {@code proclive-exit-watch}: through
 * the platform's {@link ExitEvents} where it can (nothing wakes while nothing exits), and by
 * polling all the others in one batch of verdicts, every 10 ms backing off to
 * 1 s, where it cannot. Futures are completed on another thread, so that what a caller chains onto
 * them never runs on the watching one, and a callback that throws or blocks stalls nothing here.
 *
 * <p>It never slows the JVM's exit: HotSpot's exit waits up to ~300 ms for threads that are inside
 * a native call, so the thread waits in native code only while something is watched (parked in
 * Java when nothing is), and a shutdown hook wakes it out of a pending wait and ends it.
 */
final class ExitWatch {

    static final long FIRST_POLL_MILLIS = 10;
    static final long LAST_POLL_MILLIS = 1000;
    /** How long an ended process's exit status is waited for (its parent reaps it), at most. */
    static final long REAP_GRACE_MILLIS = 500;
    /** How often it is looked for meanwhile. */
    static final long REAP_LOOK_MILLIS = 1;

    /** What the watch asks of a checker, and no more: so that it depends on verdicts, not on the checker. */
    interface Judge {
        Verdict explain(Identity identity);

        List<Verdict> checkAll(List<Identity> identities);
    }

    private final Judge checker;
    private final Supplier<Optional<ExitEvents>> opener;
    /** What the thread is asked to do, by callers and by cancellations. */
    private final ConcurrentLinkedQueue<Runnable> requests = new ConcurrentLinkedQueue<>();
    private final Executor completions;

    /** Set once, by the first watch; null while none was made. */
    private volatile ExitEvents events;
    private volatile Thread thread;
    /** Set by the shutdown hook: the thread ends instead of waiting again. */
    private volatile boolean stopping;
    private boolean opened;

    // Owned by the thread.
    private final Map<Long, Watch> evented = new HashMap<>();
    /**
     * Evented watches whose process ended, quieted, waiting for its parent to reap it: the kernel
     * keeps the exit status from then on. Each with when to stop waiting (nanoTime).
     */
    private final Map<Watch, Long> reaping = new java.util.LinkedHashMap<>();
    private final List<Watch> polled = new ArrayList<>();
    private long pollInterval = FIRST_POLL_MILLIS;
    private long nextPoll;

    /** Opens the exit events of an introspector's OS, where it has them. */
    record Opener(dev.proclive.spi.ProcessIntrospector introspector) implements Supplier<Optional<ExitEvents>> {
        @Override
        public Optional<ExitEvents> get() {
            return dev.proclive.spi.internal.KernelIntrospector.of(introspector).openExitEvents();
        }
    }

    ExitWatch(Judge checker, Supplier<Optional<ExitEvents>> opener) {
        this.checker = checker;
        this.opener = opener;
        ThreadPoolExecutor pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
                new SynchronousQueue<>(), r -> daemon(r, "proclive-exit-callback"));
        this.completions = pool;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** One watched identity. */
    private final class Watch {
        final Identity identity;
        final CompletableFuture<Verdict> future = new CompletableFuture<>();
        /** The handle {@link ExitEvents} reports, or -1 while polled. */
        long handle = -1;

        Watch(Identity identity) {
            this.identity = identity;
            future.whenComplete((v, e) -> {
                if (future.isCancelled()) {
                    request(() -> forget(this));
                }
            });
        }
    }

    CompletableFuture<Verdict> watch(Identity identity) {
        Verdict now = checker.explain(identity);
        if (now.liveness() != Liveness.ALIVE) {
            return CompletableFuture.completedFuture(now);
        }
        ExitEvents source = events();
        Watch w = new Watch(identity);
        ExitEvents.Registration r = source == null
                ? new ExitEvents.Registration.Unavailable("no exit events on this platform")
                : source.watch(identity.pid());
        if (r instanceof ExitEvents.Registration.Gone) {
            return CompletableFuture.completedFuture(checker.explain(identity));
        }
        if (r instanceof ExitEvents.Registration.Watching watching) {
            // The handle pins whatever process had the pid when it was made: the same start time now
            // means it is the recorded one, and no reuse can come between.
            Verdict pinned = checker.explain(identity);
            if (pinned.liveness() != Liveness.ALIVE) {
                source.unwatch(watching.handle());
                return CompletableFuture.completedFuture(pinned);
            }
            long handle = watching.handle();
            request(() -> addEvented(w, source, handle));
        } else {
            request(() -> addPolled(w));
        }
        return w.future;
    }

    private synchronized ExitEvents events() {
        if (!opened) {
            opened = true;
            try {
                events = opener.get().orElse(null);
            } catch (RuntimeException | LinkageError e) {
                events = null; // no exit events: every watch polls
            }
        }
        return events;
    }

    private void request(Runnable r) {
        requests.add(r);
        Thread t = thread;
        if (t == null) {
            synchronized (this) {
                if (thread == null) {
                    thread = daemon(this::run, "proclive-exit-watch");
                    thread.start();
                    stopAtExit(thread);
                }
            }
        }
        wake();
    }

    private void wake() {
        ExitEvents e = events;
        if (e != null) {
            e.wake();
        }
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t); // it may be parked: nothing was watched
        }
    }

    /** A shutdown hook that wakes {@code watcher} out of a native wait and lets it end, briefly waited for. */
    private void stopAtExit(Thread watcher) {
        Thread stop = new Thread(() -> {
            stopping = true;
            wake();
            try {
                watcher.join(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "proclive-exit-watch-stop");
        try {
            Runtime.getRuntime().addShutdownHook(stop);
        } catch (IllegalStateException shuttingDown) {
            // the JVM is exiting already; the watch ends with it
        } catch (SecurityException refused) {
            // a security manager forbids hooks: the exit may then wait for the thread
        }
    }

    private void addEvented(Watch w, ExitEvents source, long handle) {
        if (w.future.isDone() || source != events) {
            source.unwatch(handle); // cancelled already, or the events failed since (then it polls)
            addPolled(w);
            return;
        }
        w.handle = handle;
        evented.put(handle, w);
    }

    private void addPolled(Watch w) {
        if (w.future.isDone()) {
            return;
        }
        polled.add(w);
        pollInterval = FIRST_POLL_MILLIS;
        nextPoll = System.nanoTime();
    }

    private void forget(Watch w) {
        reaping.remove(w);
        ExitEvents e = events;
        if (w.handle >= 0 && evented.remove(w.handle) == w && e != null) {
            e.unwatch(w.handle);
        }
        w.handle = -1;
        polled.remove(w);
    }

    private void complete(Watch w, Verdict v) {
        forget(w); // its descriptor is closed before anyone hears of the end
        completions.execute(() -> w.future.complete(v));
    }

    private void run() {
        long[] ready = new long[256];
        while (!stopping) {
            try {
                Runnable r;
                while ((r = requests.poll()) != null) {
                    r.run();
                }
                long timeout = -1;
                if (!polled.isEmpty()) {
                    timeout = Math.max(0, TimeUnit.NANOSECONDS.toMillis(nextPoll - System.nanoTime()));
                }
                if (!reaping.isEmpty()) {
                    timeout = timeout < 0 ? REAP_LOOK_MILLIS : Math.min(timeout, REAP_LOOK_MILLIS);
                }
                ExitEvents e = events;
                int n = 0;
                if (evented.isEmpty() && polled.isEmpty()) {
                    if (requests.isEmpty() && !stopping) {
                        LockSupport.park(this); // in Java, not in a native wait: nothing holds up an exit
                    }
                } else if (e != null) {
                    try {
                        n = e.await(timeout, ready);
                    } catch (RuntimeException failed) {
                        pollEverything(e);
                    }
                } else if (requests.isEmpty()) {
                    if (timeout < 0) {
                        LockSupport.park(this);
                    } else {
                        LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(timeout));
                    }
                }
                for (int i = 0; i < n; i++) {
                    exited(ready[i]);
                }
                if (!reaping.isEmpty()) {
                    lookForStatuses();
                }
                if (!polled.isEmpty() && System.nanoTime() - nextPoll >= 0) {
                    poll();
                }
            } catch (RuntimeException | Error unexpected) {
                // the watcher must outlive anything one watch can do; the next round goes on
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(FIRST_POLL_MILLIS));
            }
        }
    }

    /** An exit event for {@code handle}: judged again, since a zombie leader's threads may still run. */
    private void exited(long handle) {
        Watch w = evented.get(handle);
        if (w == null) {
            return;
        }
        Verdict v = checker.explain(w.identity);
        if (v.liveness() == Liveness.ALIVE) {
            forget(w); // its event stays ready: from now on it is polled
            addPolled(w);
            return;
        }
        ExitEvents e = events;
        java.util.OptionalInt status = e == null ? java.util.OptionalInt.empty() : e.exitStatus(handle);
        if (status.isEmpty() && e != null && e.tellsExitStatus()) {
            // Ended, not reaped yet: the kernel keeps its status from the reap on, a moment later.
            e.quiet(handle);
            reaping.put(w, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(REAP_GRACE_MILLIS));
            return;
        }
        complete(w, withStatus(v, status));
    }

    /** Completes each watch awaiting its exit status that the kernel now tells, or that waited long enough. */
    private void lookForStatuses() {
        ExitEvents e = events;
        long now = System.nanoTime();
        for (Map.Entry<Watch, Long> r : new ArrayList<>(reaping.entrySet())) {
            Watch w = r.getKey();
            java.util.OptionalInt status = e == null ? java.util.OptionalInt.empty() : e.exitStatus(w.handle);
            if (status.isPresent() || now - r.getValue() >= 0) {
                complete(w, withStatus(checker.explain(w.identity), status)); // its parent never reaped it: no status
            }
        }
    }

    /** {@code v}, saying how the process ended when the kernel told its wait status. */
    private static Verdict withStatus(Verdict v, java.util.OptionalInt status) {
        if (status.isEmpty() || v.liveness() != Liveness.DEAD) {
            return v;
        }
        return ExitStatus.ofWaitStatus(status.getAsInt()).map(v::withExit).orElse(v);
    }

    private void poll() {
        List<Identity> ids = new ArrayList<>(polled.size());
        List<Watch> watches = new ArrayList<>(polled);
        for (Watch w : watches) {
            ids.add(w.identity);
        }
        List<Verdict> verdicts = checker.checkAll(ids);
        for (int i = 0; i < watches.size(); i++) {
            if (verdicts.get(i).liveness() != Liveness.ALIVE) {
                complete(watches.get(i), verdicts.get(i));
            }
        }
        pollInterval = Math.min(pollInterval * 2, LAST_POLL_MILLIS);
        nextPoll = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pollInterval);
    }

    /** Waiting on the events failed: every watch polls from now on. */
    private void pollEverything(ExitEvents e) {
        events = null;
        for (Iterator<Watch> it = evented.values().iterator(); it.hasNext(); ) {
            Watch w = it.next();
            it.remove();
            w.handle = -1;
            polled.add(w);
        }
        pollInterval = FIRST_POLL_MILLIS;
        nextPoll = System.nanoTime();
        e.close();
    }
}
