package dev.proclive;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Finds the process that owns the calling one: the first ancestor that is not a shell or a
 * wrapper. A hook runs as {@code owner → sh → your-hook → java}; the owner is the process whose
 * life the hook's work belongs to.
 *
 * <pre>{@code
 * Optional<Identity> owner = OwnerResolver.builder().skip("mytool").build().resolve();
 * }</pre>
 *
 * <p>The walk starts at the parent of the calling process and goes up at most
 * {@link Builder#maxDepth(int) maxDepth} ancestors (default {@value #DEFAULT_MAX_DEPTH}),
 * skipping names in the skip set. It returns empty — never a guess — when it reaches pid 1 or
 * less, a process it cannot read, a cycle, or the depth limit, and when this host's name cannot
 * be read. Default skip set: {@code sh bash zsh dash fish ash ksh mksh tcsh csh env}, and
 * {@code cmd.exe powershell.exe pwsh.exe conhost.exe} (Windows compares names
 * case-insensitively, without {@code .exe}). Runtimes such as {@code node}, {@code python3} or
 * {@code java} are never skipped by default: often the runtime <em>is</em> the owner.
 *
 * <p>On Linux a process name ({@code comm}) keeps only 15 bytes, so a skipped name longer than
 * that also matches its truncation. Resolvers are immutable and thread-safe.
 */
public final class OwnerResolver {

    /** How many ancestors a walk examines unless told otherwise. */
    public static final int DEFAULT_MAX_DEPTH = 12;

    /** The most {@link Builder#maxDepth(int)} accepts: far deeper than any real process tree. */
    public static final int MAX_DEPTH_LIMIT = 4096;

    /** Shells and launchers that are never an owner. */
    static final Set<String> DEFAULT_SKIP = Set.of(
            "sh", "bash", "zsh", "dash", "fish", "ash", "ksh", "mksh", "tcsh", "csh", "env",
            "cmd.exe", "powershell.exe", "pwsh.exe", "conhost.exe");

    /** Built without a {@link Builder}: one class fewer to load in a JVM that only resolves. */
    static final OwnerResolver DEFAULT =
            new OwnerResolver(DEFAULT_SKIP.toArray(new String[0]), DEFAULT_MAX_DEPTH, null);

    private final String[] skip;
    private final int maxDepth;
    private final ProcessIntrospector introspector;

    private OwnerResolver(String[] skip, int maxDepth, ProcessIntrospector introspector) {
        this.skip = skip;
        this.maxDepth = maxDepth;
        this.introspector = introspector;
    }

    /** A builder with the default skip set and depth, for the running OS. */
    public static Builder builder() {
        return new Builder();
    }

    /** The identity of the owner, or empty when it cannot be determined for certain. */
    public Optional<Identity> resolve() {
        LivenessChecker checker = introspector != null ? LivenessChecker.of(introspector) : LivenessChecker.system();
        ProcessIntrospector os = checker.introspector();
        if (!(os.self() instanceof ProcessLookup.Found self)) {
            return Optional.empty();
        }
        long[] seen = new long[maxDepth];
        long pid = self.info().parentPid();
        for (int depth = 0; depth < maxDepth; depth++) {
            if (pid <= 1 || contains(seen, depth, pid)) {
                return Optional.empty();
            }
            seen[depth] = pid;
            if (!(os.lookup(pid) instanceof ProcessLookup.Found found)
                    || found.info().state() != ProcessState.LIVE) {
                return Optional.empty();
            }
            ProcessInfo info = found.info();
            if (!skipped(os, info.name())) {
                return checker.record(info); // empty when the host name cannot be read
            }
            pid = info.parentPid();
        }
        return Optional.empty();
    }

    /** The names this resolver skips, in no particular order. */
    public Set<String> skipNames() {
        return Set.of(skip);
    }

    /** How many ancestors a walk examines at most. */
    public int maxDepth() {
        return maxDepth;
    }

    private boolean skipped(ProcessIntrospector os, String name) {
        for (String s : skip) {
            if (os.nameMatches(name, s)) {
                return true;
            }
        }
        return false;
    }

    private static boolean contains(long[] pids, int count, long pid) {
        for (int i = 0; i < count; i++) {
            if (pids[i] == pid) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "OwnerResolver[skip=" + Arrays.toString(skip) + ", maxDepth=" + maxDepth + "]";
    }

    /** Configures an {@link OwnerResolver}. Not thread-safe; the resolver it builds is. */
    public static final class Builder {
        private final Set<String> skip = new LinkedHashSet<>(DEFAULT_SKIP);
        private int maxDepth = DEFAULT_MAX_DEPTH;
        private ProcessIntrospector introspector;

        private Builder() {
        }

        /**
         * Also skips processes with these names: your own launcher or wrapper scripts.
         *
         * @throws NullPointerException     if {@code names} or one of them is null
         * @throws IllegalArgumentException if a name is empty or blank
         */
        public Builder skip(String... names) {
            Objects.requireNonNull(names, "names");
            for (String name : names) {
                Objects.requireNonNull(name, "skip name");
                if (name.isBlank()) {
                    throw new IllegalArgumentException("skip name must not be blank: \"" + name + "\"");
                }
            }
            skip.addAll(Arrays.asList(names));
            return this;
        }

        /**
         * How many ancestors a walk may examine before it gives up.
         *
         * @throws IllegalArgumentException if {@code maxDepth} is not between 1 and
         *                                  {@value #MAX_DEPTH_LIMIT}
         */
        public Builder maxDepth(int maxDepth) {
            if (maxDepth < 1 || maxDepth > MAX_DEPTH_LIMIT) {
                throw new IllegalArgumentException(
                        "maxDepth must be between 1 and " + MAX_DEPTH_LIMIT + ", got " + maxDepth);
            }
            this.maxDepth = maxDepth;
            return this;
        }

        /**
         * Reads processes with {@code introspector} instead of the running OS's.
         *
         * @throws NullPointerException if {@code introspector} is null
         */
        public Builder introspector(ProcessIntrospector introspector) {
            this.introspector = Objects.requireNonNull(introspector, "introspector");
            return this;
        }

        /** The resolver. */
        public OwnerResolver build() {
            return new OwnerResolver(skip.toArray(new String[0]), maxDepth, introspector);
        }
    }
}
