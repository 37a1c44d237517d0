package dev.proclive;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * The test kit's one way to wait for something: look until it holds, within a deadline scaled to
 * this machine (as Curator's {@code Timing} does), never a fixed sleep that assumes a quiet box.
 * The only sleep a test needs besides one that tests time itself is the pause between two looks,
 * here.
 */
public final class Eventually {

    private Eventually() {
    }

    /**
     * How much slower than a quiet machine this one is now, at least 1: the system property
     * {@code proclive.test.slowness} when set, else the load average per core (two churn loops on
     * two cores make about 2).
     */
    public static double slowness() {
        String given = System.getProperty("proclive.test.slowness");
        if (given != null) {
            return Math.max(1, Double.parseDouble(given));
        }
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        int cores = Runtime.getRuntime().availableProcessors();
        return load < 0 ? 1 : Math.max(1, load / cores);
    }

    /** {@code quiet}, what a quiet machine needs, scaled to this one now. */
    public static Duration scaled(Duration quiet) {
        return Duration.ofMillis((long) (quiet.toMillis() * slowness()));
    }

    /**
     * Looks at {@code probe} until {@code done} holds for what it gives, within {@code quiet}
     * scaled ({@link #scaled}) by how slow the machine is at each look, so that a build starting
     * beside the wait stretches it too; what it gave last. Fails naming {@code what} and the last value.
     */
    public static <T> T until(String what, Duration quiet, Callable<T> probe, Predicate<? super T> done) throws Exception {
        long start = System.nanoTime();
        long pause = 5;
        T seen = probe.call();
        while (!done.test(seen)) {
            long allowed = scaled(quiet).toNanos();
            if (System.nanoTime() - start > allowed) {
                throw new AssertionError(what + ": not within " + allowed / 1_000_000 + " ms; last seen: " + seen);
            }
            Thread.sleep(pause); // the kit's one pause between two looks
            pause = Math.min(100, pause * 2);
            seen = probe.call();
        }
        return seen;
    }

    /** Waits until {@code thread} runs inside a method named {@code method}, within 30 s scaled. */
    public static void inside(Thread thread, String method) throws Exception {
        until(thread.getName() + " inside " + method, Duration.ofSeconds(30), () -> java.util.Arrays.stream(
                thread.getStackTrace()).anyMatch(f -> f.getMethodName().equals(method)));
    }

    /**
     * Submits {@code call} to {@code pool} and returns its future once the thread running it is inside a method
     * named {@code method} (30 s scaled): a wait known to be under way, not merely submitted.
     */
    public static <T> java.util.concurrent.Future<T> submittedInside(java.util.concurrent.ExecutorService pool,
            String method, Callable<T> call) throws Exception {
        java.util.concurrent.CompletableFuture<Thread> running = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.Future<T> f = pool.submit(() -> {
            running.complete(Thread.currentThread());
            return call.call();
        });
        inside(running.get(scaled(Duration.ofSeconds(30)).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS),
                method);
        return f;
    }

    /** Waits until {@code condition} holds, within {@code quiet} scaled; fails naming {@code what}. */
    public static void until(String what, Duration quiet, Callable<Boolean> condition) throws Exception {
        until(what, quiet, condition, Boolean.TRUE::equals);
    }
}
