package dev.proclive.lease.book;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Work repeated on one daemon thread, each run by its deadline. {@code after} is asked under this object's lock after
 * each run, so a run asked for meanwhile is never lost: the caller sees none running and sets one, or {@code after}
 * sees what it changed. The thread ends once {@code after} names none; a run's throw, an {@code Error} too, is its own.
 */
public final class Rounds {

    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Supplier<ScheduledExecutorService> threads;
    private final Runnable work;
    private final Supplier<OptionalLong> after;
    private ScheduledExecutorService thread;
    /** The next run set, and when it is due ({@link System#nanoTime()}); null when none is. */
    private ScheduledFuture<?> next;
    private long nextAt;
    /** Which run set is the one to run: one set before it was moved does nothing. */
    private long current;
    private volatile Thread runner;
    private boolean closed;

    /** {@code after} ({@link System#nanoTime()}, or none) is asked under this object's lock: it takes no other. */
    public Rounds(String threadName, Runnable work, Supplier<OptionalLong> after) {
        this(() -> Daemons.scheduler(threadName), work, after);
    }

    /** As {@link #Rounds(String, Runnable, Supplier)}, on the threads {@code threads} makes. */
    public Rounds(Supplier<ScheduledExecutorService> threads, Runnable work, Supplier<OptionalLong> after) {
        this.threads = threads;
        this.work = work;
        this.after = after;
    }

    /** Sets a run by {@code at} ({@link System#nanoTime()}), unless one is set sooner or one is running now. */
    public synchronized void by(long at) {
        if (closed || runner != null || (next != null && nextAt - at <= 0)) {
            return; // due soon enough, or running: the run's end sets the next by what it finds then
        }
        if (next != null) {
            next.cancel(false); // one the scheduler has begun already finds it is not current, and does nothing
            next = null; // if setting the new one fails, the next call sets one
        }
        if (thread == null) {
            thread = threads.get();
        }
        long ticket = ++current;
        next = thread.schedule(() -> run(ticket), Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
        nextAt = at;
    }

    /** Sets a run {@code delay} nanoseconds from now, as {@link #by}. */
    public void in(long delay) {
        by(System.nanoTime() + delay);
    }

    private void run(long ticket) {
        synchronized (this) {
            if (closed || runner != null || ticket != current) {
                return; // moved, or closed, before it began
            }
            runner = Thread.currentThread();
            next = null;
        }
        try {
            work.run();
        } finally {
            synchronized (this) {
                runner = null;
                try {
                    OptionalLong at = closed ? OptionalLong.empty() : after.get();
                    if (at.isPresent()) {
                        by(at.getAsLong());
                    } else if (thread != null) {
                        thread.shutdown(); // the thread ends after this run; the next by() makes another
                        thread = null;
                    }
                } catch (Throwable e) {
                    // an Error asking for or setting the next (out of memory): a run a second from now, which asks again
                    try {
                        by(System.nanoTime() + RETRY_NANOS);
                    } catch (Throwable again) {
                        // nothing more to do here: the owner's next call sets a run
                    }
                }
            }
        }
    }

    /** Waits up to {@code wait} for a run under way, then interrupts it and leaves it to end by itself. */
    public void close(Duration wait) {
        ScheduledExecutorService last;
        synchronized (this) {
            closed = true; // a run under way sets none after it
            if (next != null) {
                next.cancel(false);
            }
            last = thread;
            thread = null;
        }
        if (last == null) {
            return;
        }
        last.shutdown(); // not under this lock: a run under way takes it as it ends
        if (Thread.currentThread() == runner) {
            return; // closed by its own run (a listener closing its store): it ends as it returns, not interrupted
        }
        try {
            last.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            last.shutdownNow();
        }
    }
}
