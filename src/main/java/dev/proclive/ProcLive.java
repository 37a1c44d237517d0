package dev.proclive;

import dev.proclive.platform.Platform;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Is the process that owns this still alive — that exact process, not whatever now has its PID?
 *
 * <pre>{@code
 * ProcLive.resolveOwner().ifPresent(owner -> save(owner));  // when the work starts; keep it as JSON
 * ...
 * if (ProcLive.check(load()) == Liveness.DEAD) { ... }       // later, from any process on the host
 * }</pre>
 *
 * <p>Every method uses the introspector for the running OS, chosen once from {@code os.name}: on
 * Linux it reads {@code /proc}; on macOS it asks {@code sysctl(kern.proc.pid)} through JNA; on
 * other systems every check is UNKNOWN with {@link Reason#UNSUPPORTED_PLATFORM} and no identity is
 * recorded. The precedence of the checks
 * is described in {@link LivenessChecker}.
 *
 * <p>All methods are thread-safe, never return null and never throw for a non-null identity;
 * methods that take a pid accept any {@code long} (zero, negative and huge pids are simply not
 * found). A check of a live process on Linux costs about one read of {@code /proc/PID/stat} and
 * loads no native code.
 */
public final class ProcLive {

    private ProcLive() {
    }

    /**
     * Whether the process {@code identity} names is still running: {@link Liveness#UNKNOWN} when
     * that cannot be proven either way.
     *
     * @throws NullPointerException if {@code identity} is null
     */
    public static Liveness check(Identity identity) {
        Objects.requireNonNull(identity, "identity");
        // the plain case first: a hook's cold JVM then loads no class of the checker or the SPI
        if (!checkerNeeded) {
            if (Platform.plainlyAlive(identity)) {
                return Liveness.ALIVE;
            }
            checkerNeeded = true;
        }
        return LivenessChecker.system().check(identity);
    }

    /**
     * Whether a check has needed the general checker: later ones go straight to it, since its
     * classes are loaded by then and a check the plain case cannot answer (a dead process: a failed
     * open, its exception) would otherwise be paid twice. The answers are the same either way.
     */
    private static volatile boolean checkerNeeded;

    /**
     * Like {@link #check(Identity)}, with the {@link Reason} and a short detail for a person.
     *
     * @throws NullPointerException if {@code identity} is null
     */
    public static Verdict explain(Identity identity) {
        return LivenessChecker.system().explain(identity);
    }

    /**
     * One verdict per identity, in the order given, each what {@link #explain(Identity)} would
     * say; the host, boot id and namespace are read once and each distinct pid once.
     *
     * @throws NullPointerException if {@code identities} or one of its elements is null
     */
    public static List<Verdict> checkAll(Collection<Identity> identities) {
        return LivenessChecker.system().checkAll(identities);
    }

    /**
     * A future that completes when that exact process ends: with the verdict {@link
     * #explain(Identity)} gives then (DEAD: exited, a zombie, its pid reused), at once when it is
     * DEAD already, and at once with the UNKNOWN verdict when it cannot be proven alive now (a
     * watch cannot prove the end of a process it cannot identify). Should a watched process later
     * become impossible to see, the future completes with that UNKNOWN verdict.
     *
     * <pre>{@code
     * ProcLive.onExit(owner).thenAccept(v -> releaseEverythingOf(owner));
     * }</pre>
     *
     * <p>On Linux (5.3 or later) the process is pinned with {@code pidfd_open(2)} and its identity
     * checked again after that, so a reused pid can neither fire the watch nor hide the end; one
     * daemon thread, {@code proclive-exit-watch}, waits on every pidfd at once with {@code epoll}
     * and wakes only when one exits. On macOS the same with a {@code kqueue}. Where neither is
     * possible (an older kernel, {@code pidfd_open} refused by a sandbox, JNA missing, half the
     * process's descriptor limit in use by watches, another OS) that thread polls all such
     * identities in one {@link #checkAll batch}, every 10 ms backing off to 1 s. The first watch
     * loads JNA; {@link #check} never does.
     *
     * <p><b>How it ended.</b> Where the kernel tells it, the verdict says how the process ended,
     * exited with a status or killed by a signal ({@link Verdict#exit()}), for any process, not
     * only a child of this JVM: on Linux 6.15 and later the pidfd held since before the end gives
     * its wait status once its parent has reaped it ({@code PIDFD_GET_INFO}), so the watch waits
     * up to half a second after the end for that reap (a zombie that stays unreaped longer completes
     * the watch without a status). Empty on older kernels, on macOS, when the pid was polled, and
     * for a process that was DEAD already when the watch began.
     *
     * <pre>{@code
     * ProcLive.onExit(agent).thenAccept(v -> v.exit().ifPresent(how -> log.info("agent " + how)));
     * }</pre>
     *
     * <p>The future is completed on another thread than the watching one (a callback pool whose
     * threads end when idle), so stages chained onto it may block or throw without delaying other
     * watches; as always with {@code CompletableFuture}, a thread waiting in {@code get} or
     * {@code join} at that moment may run them too. {@code cancel} stops the watch and frees
     * its descriptor; a completed watch holds none. The watch never keeps the JVM alive.
     *
     * @throws NullPointerException if {@code identity} is null
     */
    public static java.util.concurrent.CompletableFuture<Verdict> onExit(Identity identity) {
        return LivenessChecker.system().onExit(identity);
    }

    /**
     * The identity of process {@code pid} now, or empty when there is no such process, the id
     * belongs to a thread, the process cannot be read, or this host's name cannot be read.
     */
    public static Optional<Identity> identify(long pid) {
        return LivenessChecker.system().identify(pid);
    }

    /** The identity of the calling process, or empty as for {@link #identify(long)}. */
    public static Optional<Identity> current() {
        return LivenessChecker.system().current();
    }

    /**
     * The owner of the calling process: its first ancestor that is not a shell, a launcher such as
     * {@code env} or {@code timeout}, or a script run by one (see {@link OwnerResolver} for the
     * rules, for adding your own wrapper names and for {@link OwnerResolver#trace() a trace} of
     * the walk), or empty when none can be determined.
     */
    public static Optional<Identity> resolveOwner() {
        // OwnerResolver.DEFAULT's walk; its plain case first, with neither OwnerResolver nor the walk
        // and the SPI loaded (two constants that javac copies here): a hook's cold JVM loads each class at a cost
        Optional<Identity> plain = Platform.plainOwner(AncestorWalk.DEFAULT_SKIP_NAMES, OwnerResolver.DEFAULT_MAX_DEPTH);
        if (plain != null) {
            return plain;
        }
        return AncestorWalk.owner(LivenessChecker.system(), AncestorWalk.DEFAULT_SKIP, OwnerResolver.DEFAULT_MAX_DEPTH,
                0, null);
    }

    /**
     * The walk {@link #resolveOwner()} takes, step by step, ending at the owner it chose (its
     * {@link OwnerResolver.Step#owner()}) or where and why it found none: what
     * {@code proclive owner --trace} prints, a step's {@code toString()} a line (see
     * {@link OwnerResolver#trace()}).
     */
    public static List<OwnerResolver.Step> traceOwner() {
        return OwnerResolver.DEFAULT.trace();
    }

    /**
     * The ancestors of the calling process, read once ({@link Ancestry}): match every recorded
     * owner against this one snapshot, in memory. A commit hook attributes the commit to the
     * nearest recorded owner that is one of its ancestors ({@link Ancestry#depthOf}).
     */
    public static Ancestry ancestry() {
        return Ancestry.of(LivenessChecker.system(), 0);
    }

    /**
     * The ancestors of process {@code pid}, read once; an empty, incomplete snapshot when it is not
     * a live process that can be read (any long is accepted).
     */
    public static Ancestry ancestry(long pid) {
        return pid <= 0 ? Ancestry.of(LivenessChecker.system(), -1) : Ancestry.of(LivenessChecker.system(), pid);
    }

    /**
     * Whether {@code identity} is an ancestor of the calling process (that exact process: the same
     * pid and start, judged here). One walk; for many identities take {@link #ancestry()} once.
     */
    public static boolean hasAncestor(Identity identity) {
        return ancestry().hasAncestor(identity);
    }
}
