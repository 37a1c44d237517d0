package dev.proclive.spi;

/** What the kernel says about a process that still has an entry in its process table. */
public enum ProcessState {
    /** Running, sleeping, stopped, traced… anything that may still execute. */
    LIVE,
    /**
     * Exited and waiting for its parent to reap it. On Linux only when no other thread of the
     * process still runs (a {@code Z} main thread with live threads is {@link #LIVE}).
     */
    ZOMBIE,
    /** Being torn down after it was reaped (Linux {@code X}); it will not run again. */
    DEAD
}
