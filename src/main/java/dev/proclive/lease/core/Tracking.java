package dev.proclive.lease.core;

import dev.proclive.lease.book.Cgroup;
import dev.proclive.spi.internal.Descendants;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The kernel's tracking of one spawned command: this JVM made a subreaper before it started, and its cgroup. A cgroup
 * proves who stayed, never who left: this JVM's orphans are asked too (a daemon is re-parented here).
 *
 * @param cgroup       if one was made and named in the record
 * @param startedAfter a start floor taken before the command started: an older orphan is not the command's
 */
record Tracking(Descendants descendants, boolean subreaper, Optional<Cgroup> cgroup,
                Optional<String> startedAfter) {

    /** Tracking nothing: the scan is the proof. */
    static final Tracking NONE = new Tracking(Descendants.NONE, false, Optional.empty(), Optional.empty());

    private static final Duration SETTLE = Duration.ofMillis(300);

    boolean tracks() {
        return subreaper || cgroup.isPresent();
    }

    /** How what is left was found, as a record says it in {@code adoptedBy}. */
    String how() {
        return cgroup.isPresent() ? "cgroup" : "subreaper";
    }

    /** A populated cgroup stays: the kernel refuses to remove it. */
    void removeIfEmpty() {
        cgroup.ifPresent(c -> descendants.remove(c.path()));
    }

    void signalAll(int signal) {
        cgroup.ifPresent(c -> descendants.signal(c.path(), c.id(), signal));
    }

    /** Waits at most {@code most} for the members to end; one still populated then stays for whoever finds it empty. */
    void removeWhenEmpty(Duration most) {
        if (cgroup.isEmpty()) {
            return;
        }
        Cgroup c = cgroup.get();
        long deadline = System.nanoTime() + most.toNanos();
        Optional<List<Long>> inside = descendants.members(c.path(), c.id());
        while (inside.isPresent() && !inside.get().isEmpty() && System.nanoTime() - deadline < 0 && napped()) {
            inside = descendants.members(c.path(), c.id());
        }
        descendants.remove(c.path());
    }

    /**
     * The command's members and adopted orphans after it exited; empty when it cannot be told. A daemon forks and exits
     * in steps (fork, setsid, fork): read again while it changes, so that the one adopted is the one that stays.
     */
    Optional<List<Long>> leftBehind() {
        Optional<List<Long>> now = read();
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (now.isPresent() && !now.get().isEmpty() && System.nanoTime() - deadline < 0 && napped()) {
            Optional<List<Long>> again = read();
            if (again.equals(now)) {
                return now;
            }
            now = again;
        }
        return now;
    }

    /** Sleeps a moment; false when interrupted (the interrupt kept). */
    private static boolean napped() {
        try {
            Thread.sleep(20);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private Optional<List<Long>> read() {
        // once the command exited, whatever of it lives tops out at an orphan of this subreaper, in the cgroup or not
        Optional<List<Long>> orphans = subreaper ? descendants.orphans(startedAfter) : Optional.empty();
        Optional<List<Long>> members = cgroup.flatMap(c -> descendants.members(c.path(), c.id()));
        if (orphans.isEmpty()) {
            return members.filter(inside -> !inside.isEmpty()); // who is inside is a proof; an empty cgroup is not
        }
        Set<Long> all = new LinkedHashSet<>(members.orElse(List.of()));
        all.addAll(orphans.get());
        return Optional.of(new ArrayList<>(all));
    }
}
