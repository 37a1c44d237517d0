package dev.proclive;

import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.internal.ProgramNames;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the process that owns the calling one: the first ancestor that is not a shell, a launcher
 * or a wrapper. A hook runs as {@code owner → sh → your-hook → java}; the owner is the process
 * whose life the hook's work belongs to.
 *
 * <pre>{@code
 * Optional<Identity> owner = OwnerResolver.builder().skip("mytool").build().resolve();
 * }</pre>
 *
 * <p>The walk starts at the parent of the calling process (or of the process given to
 * {@link #resolveFor(long)}) and goes up at most {@link #maxDepth(int) maxDepth} ancestors
 * (default {@value #DEFAULT_MAX_DEPTH}). A process is skipped when any of its names is in the skip
 * set: its short name ({@code comm} on Linux, which for a script run through its {@code #!} line is
 * the script's file name), the file name of its executable (the interpreter), or the file name of
 * its {@code argv[0]} ({@code /bin/sh}; busybox's {@code sh} runs {@code /bin/busybox}). The other
 * two names are read only for a process whose short name is not already skipped.
 *
 * <p>The default skip set: shells ({@code sh bash zsh dash fish ash ksh mksh tcsh csh pwsh}),
 * launchers that run one command and wait for it ({@code env time timeout nice nohup setsid
 * stdbuf sudo su doas runuser setpriv xargs flock ionice chrt taskset}), container init shims
 * ({@code tini dumb-init catatonit s6-svscan}) and {@code git}, which runs a commit's hooks (agent
 * → git → sh → hook: the hook's owner is the agent that committed, not git, which is gone when the
 * commit ends). Runtimes such as {@code node}, {@code python3} or {@code java} are never skipped by default: often the runtime <em>is</em> the owner. Add your own
 * wrappers with {@link #skip(String...)}.
 *
 * <p>The walk returns empty — never a guess — when it reaches the top of the tree, pid 1 of the
 * initial PID namespace (init), a process it cannot read or that has exited, a cycle, or the
 * depth limit, and when this host's name cannot be read. In any other PID namespace pid 1 is the
 * container's entry point, often the owner itself: it is a candidate like any other, and the walk
 * ends there. {@link #trace()} tells, step by step, why a walk ended where it did. (The walk and its
 * rules are {@code AncestorWalk}'s, the one walk up the tree that {@link Ancestry} takes too.)
 *
 * <p>On Linux a short name keeps only 15 bytes, so a skipped name longer than that also matches
 * its truncation (the executable and {@code argv[0]} names are compared whole).
 *
 * <p>A resolver is immutable and thread-safe: each setting ({@link #skip(String...)},
 * {@link #maxDepth(int)}, {@link #introspector}) returns a copy with that setting changed and leaves
 * the resolver it was called on as it was. {@link #builder()} (the defaults) is where a chain of
 * settings starts and {@link #build()} (the resolver itself) ends it, kept so that the chain reads
 * as it always has.
 */
public final class OwnerResolver {

    /** How many ancestors a walk examines unless told otherwise. */
    public static final int DEFAULT_MAX_DEPTH = 12;

    /** The most {@link #maxDepth(int)} accepts: far deeper than any real process tree. */
    public static final int MAX_DEPTH_LIMIT = 4096;

    /**
     * The resolver {@link #builder()} starts from and {@link ProcLive#traceOwner()} uses;
     * {@link ProcLive#resolveOwner()} walks by the same rules without loading this class
     * ({@link AncestorWalk#owner}).
     */
    static final OwnerResolver DEFAULT =
            new OwnerResolver(AncestorWalk.DEFAULT_SKIP, DEFAULT_MAX_DEPTH, LivenessChecker.system());

    private final String[] skip;
    private final int maxDepth;
    /** Reads the processes: over the {@linkplain #introspector given introspector}, or the running OS's. */
    private final LivenessChecker checker;

    private OwnerResolver(String[] skip, int maxDepth, LivenessChecker checker) {
        this.skip = skip;
        this.maxDepth = maxDepth;
        this.checker = checker;
    }

    /**
     * The resolver with the default skip set and depth, for the running OS: where a chain of
     * settings starts ({@code OwnerResolver.builder().skip("mytool").build()}).
     */
    public static OwnerResolver builder() {
        return DEFAULT;
    }

    /**
     * A copy of this resolver that also skips processes with these names: your own launcher or
     * wrapper scripts. This resolver is unchanged.
     *
     * @throws NullPointerException     if {@code names} or one of them is null
     * @throws IllegalArgumentException if a name is empty or blank
     */
    public OwnerResolver skip(String... names) {
        Objects.requireNonNull(names, "names");
        for (String name : names) {
            Objects.requireNonNull(name, "skip name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("skip name must not be blank: \"" + name + "\"");
            }
        }
        Set<String> all = new LinkedHashSet<>(Arrays.asList(skip));
        all.addAll(Arrays.asList(names));
        return new OwnerResolver(all.toArray(new String[0]), maxDepth, checker);
    }

    /**
     * A copy of this resolver whose walks examine at most {@code maxDepth} ancestors before they give
     * up. This resolver is unchanged.
     *
     * @throws IllegalArgumentException if {@code maxDepth} is not between 1 and
     *                                  {@value #MAX_DEPTH_LIMIT}
     */
    public OwnerResolver maxDepth(int maxDepth) {
        if (maxDepth < 1 || maxDepth > MAX_DEPTH_LIMIT) {
            throw new IllegalArgumentException(
                    "maxDepth must be between 1 and " + MAX_DEPTH_LIMIT + ", got " + maxDepth);
        }
        return new OwnerResolver(skip, maxDepth, checker);
    }

    /**
     * A copy of this resolver that reads processes with {@code introspector} instead of the running
     * OS's. This resolver is unchanged.
     *
     * @throws NullPointerException if {@code introspector} is null
     */
    public OwnerResolver introspector(ProcessIntrospector introspector) {
        Objects.requireNonNull(introspector, "introspector");
        return new OwnerResolver(skip, maxDepth, LivenessChecker.of(introspector));
    }

    /** This resolver: where a chain of settings ends, kept so that the chain reads as it always has. */
    public OwnerResolver build() {
        return this;
    }

    /** The identity of the calling process's owner, or empty when it cannot be determined for certain. */
    public Optional<Identity> resolve() {
        return AncestorWalk.owner(checker, skip, maxDepth, 0, null);
    }

    /**
     * The identity of the owner of process {@code pid}: its first ancestor that is not skipped, or
     * empty as for {@link #resolve()}, and when {@code pid} is not a readable live process. For a
     * hook written in a runtime (a Python or Node hook would otherwise be its own owner): pass its
     * own pid.
     */
    public Optional<Identity> resolveFor(long pid) {
        return pid <= 0 ? Optional.empty() : AncestorWalk.owner(checker, skip, maxDepth, pid, null);
    }

    /**
     * The walk {@link #resolve()} takes, step by step, in walking order: a {@link Step.Outcome#START},
     * then each ancestor and why the walk went on or stopped there. The last step is the
     * {@link Step.Outcome#OWNER}, whose {@link Step#owner()} is what {@link #resolve()} returns, or
     * a {@link Step.Outcome#STOPPED} that says why there is none. Each step's {@code toString()} is a
     * line of {@code proclive owner --trace}.
     *
     * <pre>{@code
     * List<OwnerResolver.Step> steps = ProcLive.traceOwner();
     * Optional<Identity> owner = steps.get(steps.size() - 1).owner();
     * }</pre>
     *
     * @return the steps, never empty, unmodifiable
     */
    public List<Step> trace() {
        List<AncestorWalk.Seen> seen = new ArrayList<>();
        return steps(seen, AncestorWalk.owner(checker, skip, maxDepth, 0, seen));
    }

    /** What {@link #resolveFor(long)} finds, step by step, as {@link #trace()} tells it. */
    public List<Step> traceFor(long pid) {
        if (pid <= 0) {
            return List.of(new Step(pid, "", ProgramNames.UNKNOWN, Step.Outcome.STOPPED, "no process has pid " + pid,
                    Optional.empty()));
        }
        List<AncestorWalk.Seen> seen = new ArrayList<>();
        return steps(seen, AncestorWalk.owner(checker, skip, maxDepth, pid, seen));
    }

    /** The steps a walk saw, as a trace tells them: the owner it found on its own step. */
    private static List<Step> steps(List<AncestorWalk.Seen> seen, Optional<Identity> owner) {
        List<Step> steps = new ArrayList<>(seen.size());
        for (AncestorWalk.Seen s : seen) {
            boolean isOwner = s.kind() == AncestorWalk.Seen.Kind.OWNER;
            steps.add(new Step(s.pid(), s.name(), s.names(), Step.Outcome.valueOf(s.kind().name()), s.why(),
                    isOwner ? owner : Optional.empty()));
        }
        return List.copyOf(steps);
    }

    /** The names this resolver skips, in no particular order. */
    public Set<String> skipNames() {
        return Set.of(skip);
    }

    /** How many ancestors a walk examines at most. */
    public int maxDepth() {
        return maxDepth;
    }

    @Override
    public String toString() {
        return "OwnerResolver[skip=" + Arrays.toString(skip) + ", maxDepth=" + maxDepth + "]";
    }

    /**
     * One process of a walk.
     *
     * @param pid     the process, or the pid the walk could not go past
     * @param name    its short name ({@code comm}), empty when it was not read
     * @param executable its executable's file name, empty when not read
     * @param argv0   its {@code argv[0]}'s file name, empty when not read
     * @param outcome what the walk did with it
     * @param why     why, for a person
     * @param owner   the owner as recorded, on the {@link Outcome#OWNER} step; empty on every other
     */
    public record Step(long pid, String name, String executable, String argv0, Outcome outcome, String why,
                       Optional<Identity> owner) {

        /** What a walk did with a process. */
        public enum Outcome {
            /** Where the walk started: the calling process, or the one asked about. */
            START,
            /** A shell, launcher or wrapper: the walk went on to its parent. */
            SKIPPED,
            /** The owner. */
            OWNER,
            /** The walk ended here without an owner. */
            STOPPED
        }

        /**
         * @throws NullPointerException     if an argument is null
         * @throws IllegalArgumentException unless the owner is there exactly on the owner's step
         */
        public Step {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(executable, "executable");
            Objects.requireNonNull(argv0, "argv0");
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(why, "why");
            Objects.requireNonNull(owner, "owner");
            if (owner.isPresent() != (outcome == Outcome.OWNER)) {
                throw new IllegalArgumentException("the owner's step, and only it, names the owner");
            }
        }

        Step(long pid, String name, ProgramNames names, Outcome outcome, String why, Optional<Identity> owner) {
            this(pid, name, names.executable(), names.argv0(), outcome, why, owner);
        }

        /** {@code skipped  4241 hook.sh (exe dash, argv0 sh): why}, as {@code proclive owner --trace} prints it. */
        @Override
        public String toString() {
            StringBuilder line = new StringBuilder(String.format(java.util.Locale.ROOT, "%-8s",
                    outcome.name().toLowerCase(java.util.Locale.ROOT))).append(' ').append(pid);
            if (!name.isEmpty()) {
                line.append(' ').append(name).append(" (exe ").append(executable.isEmpty() ? "-" : executable)
                        .append(", argv0 ").append(argv0.isEmpty() ? "-" : argv0).append(')');
            }
            return line.append(": ").append(why).toString();
        }
    }
}
