package dev.proclive.lease.core;

import dev.proclive.spi.Descendants;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What the kernel tracks of one spawned command: whether this JVM became a subreaper before it
 * started, and the cgroup it started in. Once the command has exited, {@link #leftBehind()} says
 * which of its descendants live on, as a fact, or that it cannot be told (then the token scan
 * proves what it can).
 *
 * @param descendants the platform's seam
 * @param subreaper   whether this JVM was a subreaper when the command started
 * @param cgroup      the cgroup the command started in, if one was made
 * @param startedAfter a start floor taken before the command started: an orphan older than it is
 *                     not the command's
 */
record Tracking(Descendants descendants, boolean subreaper, Optional<String> cgroup, Optional<String> startedAfter) {

    /** Tracking nothing: the scan is the proof. */
    static final Tracking NONE = new Tracking(Descendants.NONE, false, Optional.empty(), Optional.empty());

    /** How long {@link #leftBehind} waits for a daemon's forks to settle. */
    private static final long SETTLE_MILLIS = 300;

    /** Whether anything is tracked. */
    boolean tracks() {
        return subreaper || cgroup.isPresent();
    }

    /** How what is left was found, as a record says it in {@code adoptedBy}. */
    String how() {
        return cgroup.isPresent() ? "cgroup" : "subreaper";
    }

    /**
     * The command's descendants that live on after it exited, oldest first: the cgroup's members
     * where there is a cgroup, else the orphans this subreaper adopted. Empty when it cannot be told.
     * A daemon forks and exits in steps (fork, setsid, fork again): while what is left changes, it
     * is read again, for a moment, so that the one adopted is the one that stays.
     */
    Optional<List<Long>> leftBehind() {
        Optional<List<Long>> now = read();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS);
        while (now.isPresent() && !now.get().isEmpty() && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return now;
            }
            Optional<List<Long>> again = read();
            if (again.equals(now)) {
                return now;
            }
            now = again;
        }
        return now;
    }

    private Optional<List<Long>> read() {
        if (cgroup.isPresent()) {
            Optional<List<Long>> members = descendants.members(cgroup.get());
            if (members.isPresent()) {
                if (subreaper) {
                    descendants.orphans(startedAfter); // reaps the orphans that ended, which cgroup.procs no longer lists
                }
                return members;
            }
        }
        return subreaper ? descendants.orphans(startedAfter) : Optional.empty();
    }
}
