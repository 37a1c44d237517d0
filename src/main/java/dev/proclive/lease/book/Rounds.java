package dev.proclive.lease.book;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One piece of work run again and again, each run by a time and never later, on one daemon thread:
 * a store's look at the grants it keeps, its session-file writes, its keep-alive's rounds.
 *
 * <p>{@link #by} sets a run by a time: one set sooner stays, one set later is moved up, and one
 * running now sets the next itself as it ends, by the time {@code after} names then. {@code after}
 * is asked under this object's lock once the run is no longer running, so a run asked for while
 * another ends is never lost: either the call sees none running and sets one, or {@code after} sees
 * what the caller changed first. One run at a time: a run set and then moved (a task the scheduler
 * had already begun as it was cancelled) does nothing. The thread is made with the first run and
 * ends once {@code after} names none; the next {@code by} makes another. What a run throws, an
 * {@code Error} too, is the run's alone: the next is set as it ends all the same (where
 * {@code after} or the scheduler throws there, a run a second later; where that fails too, the
 * next {@code by} sets one).
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
    private boolean running;
    private boolean closed;

    /**
     * Runs {@code work} on a daemon thread called {@code threadName}; after each run, the next is set
     * by the time {@code after} gives ({@link System#nanoTime()}), or none where it gives none.
     * {@code after} is asked under this object's lock: it takes no other.
     */
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
        if (closed || running || (next != null && nextAt - at <= 0)) {
            return; // due soon enough, or running (the run after it is set by what it finds then)
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
            if (closed || running || ticket != current) {
                return; // moved, or closed, before it began
            }
            running = true;
            next = null;
        }
        try {
            work.run();
        } finally {
            synchronized (this) {
                running = false;
                try {
                    OptionalLong at = closed ? OptionalLong.empty() : after.get();
                    if (at.isPresent()) {
                        by(at.getAsLong());
                    } else if (thread != null) {
                        thread.shutdown(); // nothing left to do: the thread ends after this run
                        thread = null;
                    }
                } catch (Throwable e) {
                    retry(); // an Error asking for or setting the next (out of memory): the rounds go on
                }
            }
        }
    }

    /** A run a second from now, whether or not anything is left (that run asks again); if even that fails, the next call sets one. */
    private void retry() {
        try {
            by(System.nanoTime() + RETRY_NANOS);
        } catch (Throwable again) {
            // nothing more to do here: the owner's next call sets a run
        }
    }

    /**
     * Runs nothing more. Returns once a run under way has ended, or {@code wait} has passed (then it
     * is interrupted and left to end by itself). Closing twice does nothing more.
     */
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
        try {
            last.awaitTermination(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            last.shutdownNow();
        }
    }
}
