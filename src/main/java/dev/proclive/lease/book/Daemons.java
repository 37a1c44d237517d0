package dev.proclive.lease.book;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** Makes the lease wing's threads: daemons, so none keeps a JVM from exiting, named so thread dumps tell them apart. */
public final class Daemons {

    private Daemons() {
    }

    /** Runs each task on a new daemon thread called {@code name}. */
    public static java.util.concurrent.Executor onThreadOf(String name) {
        return task -> daemon(name, task).start();
    }

    /** Runs each task on an idle daemon thread called {@code name}, or a new one; idle ones end after a minute. */
    public static java.util.concurrent.ExecutorService cached(String name) {
        return new java.util.concurrent.ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
                new java.util.concurrent.SynchronousQueue<>(), r -> daemon(name, r));
    }

    private static Thread daemon(String name, Runnable work) {
        // nothing inherited from the thread that asked for it: its thread-locals, its class loader
        Thread t = new Thread(null, work, name, 0, false);
        t.setContextClassLoader(Daemons.class.getClassLoader());
        t.setDaemon(true);
        return t;
    }

    /**
     * A {@link ScheduledThreadPoolExecutor} never runs a periodic task again once a run threw, so each
     * run is {@linkplain #surviving guarded} ({@code execute} and {@code submit} go through {@code schedule}).
     */
    public static ScheduledExecutorService scheduler(String name) {
        ScheduledThreadPoolExecutor pool = new ScheduledThreadPoolExecutor(1, r -> daemon(name, r)) {
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
        };
        pool.setRemoveOnCancelPolicy(true);
        return pool;
    }

    /** {@code task}, run so that nothing it throws ends the thread's work. */
    public static Runnable surviving(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (Throwable e) {
                // one run's failure: the next run is the retry (a grant not confirmed meanwhile is said lost)
            }
        };
    }
}
