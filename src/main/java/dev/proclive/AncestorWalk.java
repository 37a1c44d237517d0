package dev.proclive;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import dev.proclive.spi.internal.KernelIntrospector;
import dev.proclive.spi.internal.ProgramNames;
import java.util.List;
import java.util.Optional;

/**
 * The one walk up the process tree: from a process's parent, one ancestor at a time, reading each
 * one's {@code stat} (or what the platform reads for it) once, for as long as its caller asks for
 * the next one and the walk can go on; and the owner walk over it, {@link OwnerResolver}'s rules
 * ({@link #owner}), which stops at the first ancestor it does not skip. {@link Ancestry} goes on
 * to pid 1 or the depth limit. Allocates nothing per step but the lookups the introspector makes.
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

    /**
     * Shells, launchers and init shims: never an owner ({@link OwnerResolver}'s default skip set),
     * separated by single spaces. A constant, which a class that names it holds itself: {@link
     * ProcLive#resolveOwner()} hands it to the platform's plain walk without loading this class.
     */
    static final String DEFAULT_SKIP_NAMES = "sh bash zsh dash fish ash ksh mksh tcsh csh pwsh"
            + " env time timeout nice nohup setsid stdbuf sudo su doas runuser"
            + " setpriv xargs flock ionice chrt taskset git"
            + " tini dumb-init catatonit s6-svscan";

    /** {@link #DEFAULT_SKIP_NAMES}, one name an element. */
    static final String[] DEFAULT_SKIP = DEFAULT_SKIP_NAMES.split(" ");

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

    /**
     * The owner walk ({@link OwnerResolver}'s rules): the first ancestor of process {@code from} (0:
     * the calling one) none of whose names is in {@code skip}, at most {@code maxDepth} up, recorded;
     * empty when there is none for certain. {@code steps} is where a trace keeps each step, or null
     * when nobody asked why: then nothing of a trace is made or loaded (a hook's cold JVM), and the
     * other names of a process are read only where they decide something. Here rather than in
     * {@link OwnerResolver} so that {@link ProcLive#resolveOwner()} loads no class but this one to
     * walk.
     */
    static Optional<Identity> owner(LivenessChecker checker, String[] skip, int maxDepth, long from,
                                    List<Seen> steps) {
        try {
            return ownerOrThrow(checker, skip, maxDepth, from, steps);
        } catch (RuntimeException e) { // a plugged-in introspector that throws: no owner, never a guess
            if (steps != null) {
                stop(steps, from, "the process introspector failed: " + e);
            }
            return Optional.empty();
        }
    }

    private static Optional<Identity> ownerOrThrow(LivenessChecker checker, String[] skip, int maxDepth, long from,
                                                  List<Seen> steps) {
        ProcessIntrospector os = checker.introspector();
        ProcessLookup start = from == 0 ? os.self() : os.lookupProcess(from);
        if (!(start instanceof ProcessLookup.Found first) || first.info().state() != ProcessState.LIVE) {
            if (steps != null) {
                stop(steps, from, "cannot start there: " + describe(start));
            }
            return Optional.empty();
        }
        if (steps != null) {
            ProcessInfo info = first.info();
            steps.add(new Seen(info.pid(), info.name(), KernelIntrospector.of(os).programNames(info.pid()),
                    Seen.Kind.START, from == 0 ? "the calling process" : "the process asked about"));
        }
        // A loop over a cursor, not a visitor or a lambda, and ifs, not a switch on an enum: nothing
        // more loads or bootstraps on a hook's cold path.
        AncestorWalk walk = new AncestorWalk(os, first.info().parentPid(), maxDepth, true);
        while (walk.next()) {
            ProcessInfo info = walk.info();
            long pid = info.pid();
            boolean byName = commSkipped(os, skip, info.name());
            ProgramNames names = null;
            String skippedFor = null;
            boolean skipped;
            if (steps != null) { // someone asked why: every step is told, with all its names
                names = KernelIntrospector.of(os).programNames(pid);
                skippedFor = skippedFor(skip, byName, info.name(), names);
                skipped = skippedFor != null;
            } else { // the other names cost two reads: only where they decide something
                skipped = byName || KernelIntrospector.of(os).programNamedAnyOf(pid, skip);
            }
            if (skipped) {
                if (pid == 1) {
                    if (steps != null) {
                        stop(steps, info, names, "pid 1 of this container is " + skippedFor
                                + ": an init or a shell, never an owner");
                    }
                    return Optional.empty();
                }
                if (steps != null) {
                    steps.add(new Seen(pid, info.name(), names, Seen.Kind.SKIPPED, skippedFor));
                }
                continue;
            }
            Optional<Identity> recorded = checker.record(info);
            if (steps != null) {
                if (recorded.isEmpty()) {
                    stop(steps, info, names, "the owner, but this host's name cannot be read to record it");
                } else {
                    steps.add(new Seen(pid, info.name(), names, Seen.Kind.OWNER,
                            pid == 1 ? "pid 1 of this container, its entry point" : "none of its names is in the skip set"));
                }
            }
            return recorded;
        }
        if (steps != null) {
            stopped(steps, walk, maxDepth);
        }
        return Optional.empty();
    }

    /**
     * One step of an owner walk as a trace tells it: the process, its names, what the walk did with
     * it and why. {@link OwnerResolver} turns each into its public {@code Step}; loaded only for a trace.
     */
    record Seen(long pid, String name, ProgramNames names, Kind kind, String why) {
        /** What the walk did with the process, as {@code OwnerResolver.Step.Outcome} names it. */
        enum Kind { START, SKIPPED, OWNER, STOPPED }
    }

    /** Says why a walk ended without an owner. */
    private static void stopped(List<Seen> steps, AncestorWalk walk, int maxDepth) {
        End end = walk.end();
        long pid = walk.stopPid();
        if (end == End.NO_PARENT) {
            stop(steps, pid, "no parent: the walk reached the top of the process tree");
        } else if (end == End.INIT) {
            stop(steps, pid, "pid 1 of the initial PID namespace is init, never an owner");
        } else if (end == End.CYCLE) {
            stop(steps, pid, "the walk came back to pid " + pid + ": a cycle");
        } else if (end == End.EXITED) {
            stop(steps, pid, walk.stopName().isEmpty() ? "cannot read it: " + walk.stopDetail() : walk.stopDetail());
        } else if (end == End.UNREADABLE) {
            stop(steps, pid, "cannot read it: " + walk.stopDetail());
        } else if (end == End.LIMIT) {
            stop(steps, pid, "the depth limit (" + maxDepth + " ancestors) ran out before an owner was found");
        } // REACHED_PID_1: the step at pid 1 said why
    }

    /** Notes where and why the walk ended without an owner. */
    private static void stop(List<Seen> steps, long pid, String why) {
        steps.add(new Seen(pid, "", ProgramNames.UNKNOWN, Seen.Kind.STOPPED, why));
    }

    private static void stop(List<Seen> steps, ProcessInfo info, ProgramNames names, String why) {
        steps.add(new Seen(info.pid(), info.name(), names, Seen.Kind.STOPPED, why));
    }

    private static boolean commSkipped(ProcessIntrospector os, String[] skip, String comm) {
        for (String s : skip) {
            if (os.nameMatches(comm, s)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Which name put the process in the skip set, said for a person; null when none did.
     * {@code names} may be null when {@code byName}.
     */
    private static String skippedFor(String[] skip, boolean byName, String comm, ProgramNames names) {
        if (byName) {
            return "its name \"" + comm + "\" is in the skip set";
        }
        if (inSkipSet(skip, names.executable())) {
            return "its executable \"" + names.executable() + "\" is in the skip set";
        }
        if (inSkipSet(skip, names.argv0())) {
            return "its argv[0] \"" + names.argv0() + "\" is in the skip set";
        }
        return null;
    }

    private static boolean inSkipSet(String[] skip, String name) {
        for (String s : skip) {
            if (s.equals(name)) {
                return true;
            }
        }
        return false;
    }

}
