package dev.proclive;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;

/**
 * The one walk up the process tree: from a process's parent, one ancestor at a time, reading each
 * one's {@code stat} (or what the platform reads for it) once, for as long as its caller asks for
 * the next one and the walk can go on. {@link OwnerResolver} stops at the first ancestor it does
 * not skip; {@link Ancestry} goes on to pid 1 or the depth limit. Allocates nothing per step but
 * the lookups the introspector makes.
 *
 * <p>A cursor rather than a walk that calls back: one class, which is all a hook's cold JVM loads
 * of it while it finds an owner ({@link End} loads only when a walk ends without one). One walk,
 * one thread.
 *
 * <pre>{@code
 * AncestorWalk walk = new AncestorWalk(os, parentPid, maxDepth, true);
 * while (walk.next()) {
 *     ... walk.info() ...      // a live ancestor, at walk.depth() (0: the parent)
 * }
 * ... walk.end() ...           // why it ended, when next() said false
 * }</pre>
 */
final class AncestorWalk {

    /** Why a walk ended. */
    enum End {
        /** An ancestor's parent is pid 0: the top of the tree, or a parent outside this PID namespace. */
        NO_PARENT,
        /** The next ancestor is pid 1 of the initial PID namespace, and the walk was asked to stop before init. */
        INIT,
        /** pid 1 was visited: nothing is above it. */
        REACHED_PID_1,
        /** The walk came back to a pid it had seen. */
        CYCLE,
        /** An ancestor could not be read. */
        UNREADABLE,
        /** An ancestor has exited (a zombie, or gone between the reads). */
        EXITED,
        /** The depth limit ran out. */
        LIMIT
    }

    private final ProcessIntrospector os;
    private final int maxDepth;
    private final boolean initialNamespace;
    private long[] seen;
    private int seenCount;
    /** The pid read next. */
    private long pid;
    private int depth = -1;
    private ProcessInfo info;
    private End end;
    private String stopName = "";
    private String stopDetail = "";

    /**
     * A walk up from {@code firstParent} (the parent of the process the walk is for), at most
     * {@code maxDepth} ancestors.
     *
     * @param beforeInit whether to stop before pid 1 of the initial PID namespace (init is never
     *                   an owner) rather than visit it
     */
    AncestorWalk(ProcessIntrospector os, long firstParent, int maxDepth, boolean beforeInit) {
        this.os = os;
        this.maxDepth = maxDepth;
        this.initialNamespace = beforeInit && os.inInitialPidNamespace();
        this.seen = new long[Math.min(maxDepth, 64)];
        this.pid = firstParent;
    }

    /**
     * Goes to the next ancestor: true when there is one, live, in {@link #info()}; false when the
     * walk has ended, and {@link #end()} says why.
     */
    boolean next() {
        if (end != null) {
            return false;
        }
        if (info != null) {
            if (info.pid() == 1) {
                return stop(End.REACHED_PID_1, info.name(), "");
            }
            pid = info.parentPid();
            info = null;
        }
        if (++depth >= maxDepth) {
            return stop(End.LIMIT, "", "");
        }
        if (pid <= 0) {
            return stop(End.NO_PARENT, "", "");
        }
        if (pid == 1 && initialNamespace) {
            return stop(End.INIT, "", "");
        }
        for (int i = 0; i < seenCount; i++) {
            if (seen[i] == pid) {
                return stop(End.CYCLE, "", "");
            }
        }
        if (seenCount == seen.length) {
            seen = java.util.Arrays.copyOf(seen, seen.length * 2);
        }
        seen[seenCount++] = pid;
        ProcessLookup lookup = os.lookup(pid);
        if (!(lookup instanceof ProcessLookup.Found found)) {
            return stop(lookup instanceof ProcessLookup.Gone ? End.EXITED : End.UNREADABLE, "", describe(lookup));
        }
        ProcessInfo read = found.info();
        if (read.state() != ProcessState.LIVE) {
            return stop(End.EXITED, read.name(), read.name() + " has exited");
        }
        info = read;
        return true;
    }

    private boolean stop(End why, String name, String detail) {
        end = why;
        stopName = name;
        stopDetail = detail;
        return false;
    }

    /** The ancestor {@link #next()} went to. */
    ProcessInfo info() {
        return info;
    }

    /** How far up {@link #info()} is: 0 for the parent. */
    int depth() {
        return depth;
    }

    /** Why the walk ended; null while it goes on, or when its caller stopped it. */
    End end() {
        return end;
    }

    /** Where the walk ended: the pid it could not go past, or the last one it read. */
    long stopPid() {
        return pid;
    }

    /** The name of the process it ended at, when that was read; else empty. */
    String stopName() {
        return stopName;
    }

    /** What the platform said of the process it ended at ({@link End#UNREADABLE}, {@link End#EXITED}), for a person. */
    String stopDetail() {
        return stopDetail;
    }

    /** What a lookup that found no live process says, for a person. */
    static String describe(ProcessLookup lookup) {
        if (lookup instanceof ProcessLookup.Unknown unknown) {
            return unknown.detail().isEmpty() ? unknown.reason().toString() : unknown.detail();
        }
        if (lookup instanceof ProcessLookup.Gone gone) {
            return gone.detail().isEmpty() ? "it is gone" : gone.detail();
        }
        return "it has exited";
    }
}
