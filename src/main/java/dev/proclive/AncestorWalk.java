package dev.proclive;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;

/**
 * The one walk up the process tree: from a process's parent, one ancestor at a time, reading each
 * one's {@code stat} (or what the platform reads for it) once, until the visitor has seen enough or
 * the walk cannot go on. {@link OwnerResolver} stops at the first ancestor it does not skip;
 * {@link Ancestry} goes on to pid 1 or the depth limit. Allocates nothing per step but the
 * lookups the introspector makes.
 */
final class AncestorWalk {

    private AncestorWalk() {
    }

    /** What the walk shows a visitor, and what the visitor decides. */
    interface Visitor {
        /**
         * {@code info}, a live ancestor at {@code depth} (0: the parent): true to go on to its
         * parent, false when the visitor has what it came for.
         */
        boolean visit(ProcessInfo info, int depth);
    }

    /** Why a walk ended. */
    enum End {
        /** The visitor had what it came for. */
        DONE,
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

    /**
     * How a walk ended: why, at which pid, and what the platform said of it (for {@link
     * End#UNREADABLE}, {@link End#EXITED}), for a person.
     */
    record Stop(End end, long pid, String name, String detail) {
    }

    /**
     * Walks up from {@code firstParent} (the parent of the process the walk is for) at most
     * {@code maxDepth} ancestors.
     *
     * @param beforeInit whether to stop before pid 1 of the initial PID namespace (init is never
     *                   an owner) rather than visit it
     */
    static Stop up(ProcessIntrospector os, long firstParent, int maxDepth, boolean beforeInit, Visitor visitor) {
        boolean initialNamespace = beforeInit && os.inInitialPidNamespace();
        long[] seen = new long[Math.min(maxDepth, 64)];
        int seenCount = 0;
        long pid = firstParent;
        for (int depth = 0; depth < maxDepth; depth++) {
            if (pid <= 0) {
                return new Stop(End.NO_PARENT, pid, "", "");
            }
            if (pid == 1 && initialNamespace) {
                return new Stop(End.INIT, pid, "", "");
            }
            if (contains(seen, seenCount, pid)) {
                return new Stop(End.CYCLE, pid, "", "");
            }
            if (seenCount == seen.length) {
                seen = java.util.Arrays.copyOf(seen, seen.length * 2);
            }
            seen[seenCount++] = pid;
            ProcessLookup lookup = os.lookup(pid);
            if (!(lookup instanceof ProcessLookup.Found found)) {
                return new Stop(lookup instanceof ProcessLookup.Gone ? End.EXITED : End.UNREADABLE, pid, "",
                        describe(lookup));
            }
            ProcessInfo info = found.info();
            if (info.state() != ProcessState.LIVE) {
                return new Stop(End.EXITED, pid, info.name(), info.name() + " has exited");
            }
            if (!visitor.visit(info, depth)) {
                return new Stop(End.DONE, pid, info.name(), "");
            }
            if (pid == 1) {
                return new Stop(End.REACHED_PID_1, pid, info.name(), "");
            }
            pid = info.parentPid();
        }
        return new Stop(End.LIMIT, pid, "", "");
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

    private static boolean contains(long[] pids, int count, long pid) {
        for (int i = 0; i < count; i++) {
            if (pids[i] == pid) {
                return true;
            }
        }
        return false;
    }
}
