package dev.proclive;

import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The ancestors of a process, read once: nearest first, up to {@value #MAX_DEPTH}. A commit hook
 * takes one snapshot and matches every recorded owner against it in memory — which session made
 * this commit? — instead of walking once per owner.
 *
 * <pre>{@code
 * Ancestry here = ProcLive.ancestry();                  // one walk
 * for (Session s : sessions) {
 *     here.depthOf(s.owner()).ifPresent(d -> ...);      // the nearest ancestor wins: a nested
 * }                                                     // agent beats the one that started it
 * }</pre>
 *
 * <p>Matching is never a guess. An identity is matched only if it can be judged here as
 * {@link ProcLive#check} judges it: the same host and machine, the same PID namespace (one that
 * records none is judged only from the initial one), the same boot, a start fingerprint recorded.
 * Then: the same pid and start as an ancestor → its {@linkplain #depthOf depth}; the same pid and
 * another start → not an ancestor (a chain never holds a pid twice, and that process is gone);
 * absent from a {@linkplain #complete complete} chain → not an ancestor; absent from an incomplete
 * one → neither (it may be above the cut). Immutable and thread-safe; {@link #depthOf} and
 * {@link #chain} read nothing, {@link #excludes} may (see there).
 */
public final class Ancestry {

    /** How many ancestors a snapshot holds at most: a commit hook's chain of hook managers, shims and nested agents runs past 12. */
    public static final int MAX_DEPTH = 64;

    /**
     * Which of several sessions' owners is this process's nearest ancestor: what {@link #nearest}
     * found.
     *
     * @param <K> what names a session
     */
    public sealed interface Nearest<K> {
        /** One owner is the nearest ancestor, at {@code depth} (0: the parent). */
        record Found<K>(K key, int depth) implements Nearest<K> {
        }

        /** Several keys name the nearest ancestor (one process recorded as two sessions' owner): it cannot be told which. */
        record Ambiguous<K>(List<K> keys, int depth) implements Nearest<K> {
            /** The keys, copied. */
            public Ambiguous {
                keys = List.copyOf(keys);
            }
        }

        /** The chain is complete and holds none of them. */
        record None<K>() implements Nearest<K> {
        }

        /** None was found, and the chain is incomplete (one may be above the cut): {@code reason} says why. */
        record Unknown<K>(String reason) implements Nearest<K> {
        }
    }

    /**
     * Which of {@code owners} (each a session's recorded owner, by the session's key) is the nearest
     * ancestor of this process: the one at the smallest depth. A commit hook under nested agents
     * links the commit to the inner one; two keys for the one nearest ancestor are
     * {@link Nearest.Ambiguous}. From this snapshot alone, reading nothing: an owner that cannot be
     * matched here (another host, another PID namespace, no fingerprint) is never found — and when
     * it names the pid of an ancestor no farther up than the nearest one found (or of any ancestor,
     * when none was found), the answer is {@link Nearest.Unknown} with why it cannot be judged: it
     * may be that ancestor, so the one farther up is not known to be the nearest. (An owner of an
     * earlier boot of this machine is gone: it names nobody.)
     *
     * <pre>{@code
     * Ancestry.Nearest<String> mine = ProcLive.ancestry().nearest(ownersBySession);
     * if (mine instanceof Ancestry.Nearest.Found<String> found) {
     *     link(commit, found.key());
     * }
     * }</pre>
     *
     * @throws NullPointerException if {@code owners}, a key or an owner is null
     */
    public <K> Nearest<K> nearest(java.util.Map<K, Identity> owners) {
        Objects.requireNonNull(owners, "owners");
        int best = Integer.MAX_VALUE;
        List<K> at = new ArrayList<>();
        int unjudgedAt = Integer.MAX_VALUE; // the nearest ancestor's pid an owner that cannot be judged names
        String unjudgedFor = "";
        for (java.util.Map.Entry<K, Identity> e : owners.entrySet()) {
            Objects.requireNonNull(e.getKey(), "key");
            Identity owner = Objects.requireNonNull(e.getValue(), "owner");
            Optional<Reason> unjudgeable = unjudgeable(owner);
            if (unjudgeable.isPresent()) {
                int named = unjudgeable.get() == Reason.REBOOTED ? -1 : depthOfPid(owner.pid());
                if (named >= 0 && named < unjudgedAt) {
                    unjudgedAt = named;
                    unjudgedFor = unjudgeable.get().json();
                }
                continue;
            }
            OptionalInt depth = depthOf(owner);
            if (depth.isEmpty() || depth.getAsInt() > best) {
                continue;
            }
            if (depth.getAsInt() < best) {
                best = depth.getAsInt();
                at.clear();
            }
            at.add(e.getKey());
        }
        if (!unjudgedFor.isEmpty() && unjudgedAt <= best) {
            return new Nearest.Unknown<>(unjudgedFor);
        }
        if (at.size() == 1) {
            return new Nearest.Found<>(at.get(0), best);
        }
        if (at.size() > 1) {
            return new Nearest.Ambiguous<>(at, best);
        }
        return complete ? new Nearest.None<>() : new Nearest.Unknown<>("chain_incomplete");
    }

    private final List<Identity> chain;
    private final boolean complete;
    private final String host;
    private final String machine;
    private final String boot;
    private final String pidns;
    private final boolean initialPidns;
    private final LivenessChecker checker;

    private Ancestry(List<Identity> chain, boolean complete, String host, String machine, String boot, String pidns,
                     boolean initialPidns, LivenessChecker checker) {
        this.chain = Collections.unmodifiableList(chain);
        this.complete = complete;
        this.host = host;
        this.machine = machine;
        this.boot = boot;
        this.pidns = pidns;
        this.initialPidns = initialPidns;
        this.checker = checker;
    }

    /**
     * The ancestors of process {@code pid} (0: the calling process), as {@code checker} reads them.
     * Never throws: what cannot be read ends the walk, and the snapshot says it is incomplete.
     */
    static Ancestry of(LivenessChecker checker, long pid) {
        ProcessIntrospector os = checker.introspector();
        List<Identity> chain = new ArrayList<>();
        boolean complete = false;
        String hostName = "";
        try {
            hostName = checker.hostName().orElse("");
            ProcessLookup start = pid == 0 ? os.self() : os.lookupProcess(pid);
            if (pid >= 0 && start instanceof ProcessLookup.Found first && first.info().state() == ProcessState.LIVE) {
                if (first.info().pid() == 1) {
                    complete = true; // pid 1 has no ancestor to miss
                } else {
                    AncestorWalk walk = new AncestorWalk(os, first.info().parentPid(), MAX_DEPTH, false);
                    while (walk.next()) {
                        Optional<Identity> id = checker.record(walk.info());
                        if (id.isEmpty()) {
                            break; // the host name cannot be read: nothing more can be recorded
                        }
                        chain.add(id.get());
                    }
                    complete = walk.end() == AncestorWalk.End.REACHED_PID_1;
                }
            }
        } catch (RuntimeException e) {
            complete = false; // a plugged-in introspector that throws: what was read stands, incomplete
        }
        return new Ancestry(chain, complete, hostName, os.machineId().orElse(""), os.bootId().orElse(""),
                os.pidNamespace().orElse(""), os.inInitialPidNamespace(), checker);
    }

    /** The ancestors, nearest first (the parent is first); the process itself is not among them. */
    public List<Identity> chain() {
        return chain;
    }

    /**
     * Whether the walk reached pid 1 (of this PID namespace): then every ancestor is in the chain.
     * False when it stopped at the depth limit, at a process it could not read or that vanished, or
     * at a parent outside this PID namespace (a parent pid of 0).
     */
    public boolean complete() {
        return complete;
    }

    /**
     * How far up {@code id} is (0: the parent), when it is one of the ancestors; empty when it is
     * not, or that cannot be told. Reads nothing.
     */
    public OptionalInt depthOf(Identity id) {
        return matchChain(id).depth();
    }

    /**
     * Whether {@code id} is provably not an ancestor: it can be judged here, and it is absent from a
     * complete chain, or its pid is in the chain under another start (recycled), or — beyond what the
     * chain alone says — it is DEAD now (a dead process is nobody's ancestor): for that last case this
     * reads, as {@link ProcLive#check} does. Never true for what cannot be told: another host's
     * identity, one without a start fingerprint, one absent from an incomplete chain that still lives.
     */
    public boolean excludes(Identity id) {
        Match m = match(id);
        return m.depth().isEmpty() && m.unknown().isEmpty();
    }

    /** Whether {@code id} is one of the ancestors (as {@link #depthOf} finds it). Reads nothing. */
    public boolean hasAncestor(Identity id) {
        return depthOf(id).isPresent();
    }

    /**
     * Why it cannot be told whether {@code id} is an ancestor: a {@link Reason}'s JSON word
     * (such as {@code other_host}, {@code other_pid_namespace}, {@code no_fingerprint})
     * when it cannot be judged here, or {@code chain_incomplete} when it is absent from an incomplete
     * chain and still lives. Empty when it can be told: {@link #depthOf} finds it, or
     * {@link #excludes} holds. May read, as {@link #excludes} does.
     *
     * <pre>{@code
     * Ancestry here = ProcLive.ancestry();
     * if (here.depthOf(owner).isEmpty()) {
     *     here.whyUnknown(owner).ifPresentOrElse(why -> log("cannot tell: " + why), () -> log("not ours"));
     * }
     * }</pre>
     */
    public Optional<String> whyUnknown(Identity id) {
        return match(id).unknown();
    }

    /**
     * What {@code id} is to this process: an ancestor at {@code depth}, unknown for a reason, or
     * (neither) provably not one.
     */
    private record Match(OptionalInt depth, Optional<String> unknown) {
        static Match ancestor(int depth) {
            return new Match(OptionalInt.of(depth), Optional.empty());
        }

        static Match notAncestor() {
            return new Match(OptionalInt.empty(), Optional.empty());
        }

        static Match unknown(String reason) {
            return new Match(OptionalInt.empty(), Optional.of(reason));
        }
    }

    /** As {@link #depthOf} and {@link #excludes} decide it; may read, as {@link #excludes} does. */
    private Match match(Identity id) {
        Match m = matchChain(id);
        if (m.unknown().isEmpty()) {
            return m;
        }
        // What the chain cannot tell, the process's end can: a DEAD identity is nobody's ancestor.
        if (id != null && id.pid() > 0 && checker.check(id) == Liveness.DEAD) {
            return Match.notAncestor();
        }
        return m;
    }

    /** How far up the ancestor with {@code pid} is, or -1 when none has it. */
    private int depthOfPid(long pid) {
        for (int i = 0; i < chain.size(); i++) {
            if (chain.get(i).pid() == pid) {
                return i;
            }
        }
        return -1;
    }

    /** The chain's answer alone. */
    private Match matchChain(Identity id) {
        Optional<Reason> guard = unjudgeable(id);
        if (guard.isPresent()) {
            return Match.unknown(guard.get().json());
        }
        ProcessIntrospector os = checker.introspector();
        for (int i = 0; i < chain.size(); i++) {
            Identity a = chain.get(i);
            if (a.pid() == id.pid()) {
                return os.sameStart(id.start(), a.start()) ? Match.ancestor(i)
                        : Match.notAncestor(); // the pid was recycled: that process is gone
            }
        }
        return complete ? Match.notAncestor() : Match.unknown("chain_incomplete");
    }

    /**
     * Why {@code id} cannot be matched here, as the verdict precedence's first rows would say it;
     * empty when it can be.
     */
    private Optional<Reason> unjudgeable(Identity id) {
        if (id == null || id.pid() <= 0) {
            return Optional.of(Reason.NO_IDENTITY);
        }
        if (!id.host().isEmpty() && !id.host().equals(host) || !id.machine().isEmpty() && !id.machine().equals(machine)) {
            return Optional.of(Reason.OTHER_HOST);
        }
        if (!id.pidns().isEmpty() && !id.pidns().equals(pidns) || id.pidns().isEmpty() && !initialPidns) {
            return Optional.of(Reason.OTHER_PID_NAMESPACE);
        }
        if (!id.boot().isEmpty() && !id.boot().equals(boot)) {
            return Optional.of(checker.introspector().isBootId(id.boot()) ? Reason.REBOOTED : Reason.NO_FINGERPRINT);
        }
        if (id.start().isEmpty() || !checker.introspector().isFingerprint(id.start())) {
            return Optional.of(Reason.NO_FINGERPRINT);
        }
        return Optional.empty();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("Ancestry[").append(complete ? "complete" : "incomplete").append(':');
        for (Identity a : chain) {
            b.append(' ').append(a.pid()).append(a.name().isEmpty() ? "" : "(" + a.name() + ")");
        }
        return b.append(']').toString();
    }
}
