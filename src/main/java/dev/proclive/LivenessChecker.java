package dev.proclive;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The verdict rules of {@link ProcLive} over a chosen {@link ProcessIntrospector}. Use
 * {@link ProcLive} for the running OS; use this class to plug in another introspector (a test
 * double, a platform proclive does not ship).
 *
 * <p>The precedence, first match wins:
 * <ol>
 *   <li>{@code pid <= 0} → UNKNOWN {@link Reason#NO_IDENTITY}</li>
 *   <li>{@code host} recorded and not this host (or this host unreadable) → UNKNOWN
 *       {@link Reason#OTHER_HOST}; so is {@code machine} recorded and not this machine's id (or
 *       this machine's id unreadable): a host name is no proof of a machine</li>
 *   <li>{@code pidns} recorded and not this process's PID namespace → UNKNOWN
 *       {@link Reason#OTHER_PID_NAMESPACE}</li>
 *   <li>{@code boot} recorded: unreadable now → UNKNOWN {@link Reason#IO_ERROR}; not a boot id
 *       as this platform writes them → UNKNOWN {@link Reason#NO_FINGERPRINT}; another boot →
 *       DEAD {@link Reason#REBOOTED} (with {@code machine} recorded, row 2 has proved it is this
 *       machine; without it, the host name is taken as proof)</li>
 *   <li>the process: proven gone → DEAD {@link Reason#EXITED}; unreadable → UNKNOWN with the
 *       introspector's reason</li>
 *   <li>{@code start} empty, or not a fingerprint this platform writes → UNKNOWN {@link Reason#NO_FINGERPRINT}</li>
 *   <li>{@code start} differs → DEAD {@link Reason#PID_REUSED}</li>
 *   <li>zombie → DEAD {@link Reason#ZOMBIE}</li>
 *   <li>otherwise ALIVE {@link Reason#MATCHED}</li>
 * </ol>
 *
 * <p>Row 3 also covers an identity that records no PID namespace (as the Go package writes them)
 * judged from a namespace other than the initial one: it may come from the host or another
 * container, so a missing pid or another start there is UNKNOWN {@link Reason#OTHER_PID_NAMESPACE},
 * never DEAD; only a matching start proves anything.
 *
 * <p>The host name is read at most about once a second; the machine id, boot id and PID namespace
 * are cached by the introspector, which knows whether they can change. A verdict's detail quotes
 * at most a short prefix of each recorded value, so a corrupt identity cannot make it large. Instances are thread-safe; no
 * method returns null or throws for a non-null identity — not even over an introspector that
 * breaks its contract and throws: that verdict is UNKNOWN {@link Reason#IO_ERROR}, and nothing is
 * recorded.
 */
public final class LivenessChecker {

    /** How long a read of this host's name is reused: a host can be renamed while a process lives. */
    static final long HOST_TTL_NANOS = 1_000_000_000L;

    private final ProcessIntrospector introspector;
    /**
     * What the host-name cache tells time by: a test's ticker, or null for {@link System#nanoTime()}
     * (null rather than a method reference: a hook's cold JVM would bootstrap a lambda for it).
     */
    private final java.util.function.LongSupplier nanoTime;
    /**
     * The last host name read and when. Two volatiles, not one pair: a reader that sees a new time
     * with the old name serves a name that was current less than a period ago.
     */
    private volatile Optional<String> hostName;
    private volatile long hostReadAt;
    /** Made by the first {@link #onExit}, so that a checker that only checks never starts a thread. */
    private volatile ExitWatch exitWatch;

    /** A checker whose host-name cache tells time by {@code nanoTime}: the tick seam for tests in this package. */
    static LivenessChecker of(ProcessIntrospector introspector, java.util.function.LongSupplier nanoTime) {
        return new LivenessChecker(Objects.requireNonNull(introspector, "introspector"),
                Objects.requireNonNull(nanoTime, "nanoTime"));
    }

    private LivenessChecker(ProcessIntrospector introspector, java.util.function.LongSupplier nanoTime) {
        this.introspector = introspector;
        this.nanoTime = nanoTime;
    }

    /**
     * A checker over {@code introspector}.
     *
     * @throws NullPointerException if {@code introspector} is null
     */
    public static LivenessChecker of(ProcessIntrospector introspector) {
        return new LivenessChecker(Objects.requireNonNull(introspector, "introspector"), null);
    }

    /** The checker over the introspector for the running OS, made on first use; guarded by the class. */
    private static LivenessChecker system;

    /** The checker {@link ProcLive} uses: over the introspector for the running OS. */
    public static synchronized LivenessChecker system() {
        if (system == null) {
            system = of(dev.proclive.platform.Platform.introspector());
        }
        return system;
    }

    /** The introspector this checker reads processes with. */
    public ProcessIntrospector introspector() {
        return introspector;
    }

    /**
     * Whether the process {@code identity} names is still running.
     *
     * @throws NullPointerException if {@code identity} is null
     */
    public Liveness check(Identity identity) {
        Objects.requireNonNull(identity, "identity");
        try {
            // The facts read one by one, not as a Here: one class fewer in a hook's cold JVM.
            Optional<Reason> guard = guard(identity, hostName(), introspector.machineId(), introspector.pidNamespace(),
                    introspector.bootId());
            if (guard.isPresent()) {
                return guard.get().liveness();
            }
            Reason reason = judge(identity, introspector.lookup(identity.pid()), introspector.inInitialPidNamespace());
            return reason == null ? Liveness.ALIVE : reason.liveness();
        } catch (RuntimeException e) {
            return Liveness.UNKNOWN; // a plugged-in introspector broke its contract: see failed()
        }
    }

    /**
     * Like {@link #check(Identity)}, with the reason and a short detail for a person.
     *
     * @throws NullPointerException if {@code identity} is null
     */
    public Verdict explain(Identity identity) {
        Objects.requireNonNull(identity, "identity");
        try {
            return explain(identity, here(), null);
        } catch (RuntimeException e) {
            return failed(e);
        }
    }

    /**
     * A future that completes when {@link #explain(Identity)} would no longer say ALIVE for
     * {@code identity}: with that verdict (DEAD, or UNKNOWN if the process can no longer be seen),
     * at once when it is not ALIVE now. See {@link ProcLive#onExit(Identity)}.
     *
     * @throws NullPointerException if {@code identity} is null
     */
    public CompletableFuture<Verdict> onExit(Identity identity) {
        Objects.requireNonNull(identity, "identity");
        ExitWatch w = exitWatch;
        if (w == null) {
            synchronized (this) {
                w = exitWatch;
                if (w == null) {
                    w = Watching.over(this);
                    exitWatch = w;
                }
            }
        }
        return w.watch(identity);
    }

    /**
     * One verdict per identity, in the order given: what {@link #explain(Identity)} says of each,
     * reading the host, boot id and namespace once and each distinct pid once.
     *
     * @throws NullPointerException if {@code identities} or one of its elements is null
     */
    public List<Verdict> checkAll(Collection<Identity> identities) {
        Objects.requireNonNull(identities, "identities");
        List<Identity> ids = new ArrayList<>(identities);
        for (int i = 0; i < ids.size(); i++) {
            Objects.requireNonNull(ids.get(i), "identities[" + i + "] is null");
        }
        List<Verdict> verdicts = new ArrayList<>(ids.size());
        VerdictDetail.Here here;
        try {
            here = here();
        } catch (RuntimeException e) {
            for (int i = 0; i < ids.size(); i++) { // a loop, not a lambda: its bootstrap data would load with the class
                verdicts.add(failed(e));
            }
            return verdicts;
        }
        Map<Long, ProcessLookup> lookups = new HashMap<>();
        for (Identity id : ids) {
            try {
                verdicts.add(explain(id, here, lookups));
            } catch (RuntimeException e) {
                verdicts.add(failed(e));
            }
        }
        return verdicts;
    }

    /**
     * What a verdict is when the introspector threw, which the SPI forbids: UNKNOWN, never an
     * exception to the caller, whose identity was well formed.
     */
    private static Verdict failed(RuntimeException e) {
        return Verdict.of(Reason.IO_ERROR, "the process introspector failed: " + e);
    }

    /** The verdict and its words; {@code lookups}, when given, keeps each pid's read for the batch. */
    private Verdict explain(Identity id, VerdictDetail.Here here, Map<Long, ProcessLookup> lookups) {
        Optional<Reason> guard = guard(id, here.host(), here.machine(), here.pidns(), here.boot());
        if (guard.isPresent()) {
            return Verdict.of(guard.get(), VerdictDetail.guard(guard.get(), id, here, introspector));
        }
        ProcessLookup lookup = lookups == null ? null : lookups.get(id.pid());
        if (lookup == null) {
            lookup = introspector.lookup(id.pid());
            if (lookups != null) {
                lookups.put(id.pid(), lookup);
            }
        }
        Reason judged = judge(id, lookup, here.initialPidns());
        Reason reason = judged == null ? Reason.MATCHED : judged;
        return Verdict.of(reason, VerdictDetail.process(reason, id, lookup, here));
    }

    /**
     * The identity of process {@code pid} as it runs now, or empty when it does not exist, is a
     * thread rather than a process, cannot be read, or this host's name cannot be read (an
     * identity without a host could later be judged on another machine).
     */
    public Optional<Identity> identify(long pid) {
        if (pid <= 0) {
            return Optional.empty();
        }
        try {
            return record(introspector.lookupProcess(pid));
        } catch (RuntimeException e) {
            return Optional.empty(); // a broken introspector records nothing
        }
    }

    /** The identity of the calling process, or empty as for {@link #identify(long)}. */
    public Optional<Identity> current() {
        try {
            return record(introspector.self());
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private Optional<Identity> record(ProcessLookup lookup) {
        if (!(lookup instanceof ProcessLookup.Found found)) {
            return Optional.empty();
        }
        return record(found.info());
    }

    /** This host's name, as identities record it (cached for about a second); empty when it cannot be read. */
    Optional<String> hostName() {
        Optional<String> h = hostName;
        long now = nanoTime == null ? System.nanoTime() : nanoTime.getAsLong();
        if (h == null || now - hostReadAt > HOST_TTL_NANOS) {
            h = introspector.hostName();
            hostReadAt = now;
            hostName = h;
        }
        return h;
    }

    /** The identity of a live process read just now; empty for any other, or when the host name cannot be read. */
    Optional<Identity> record(ProcessInfo info) {
        Optional<String> hostName = hostName();
        if (hostName.isEmpty() || info.state() != ProcessState.LIVE) {
            return Optional.empty();
        }
        return Optional.of(new Identity(info.pid(), info.start(), introspector.bootId().orElse(""), hostName.get(),
                info.name(), introspector.pidNamespace().orElse(""), introspector.machineId().orElse("")));
    }

    /**
     * Row 3's second half: an identity that records no PID namespace, judged from a namespace
     * other than the initial one, may come from the host or another container.
     */
    private static boolean mayBeForeign(Identity id, boolean initialPidns) {
        return id.pidns().isEmpty() && !initialPidns;
    }

    private VerdictDetail.Here here() {
        return new VerdictDetail.Here(hostName(), introspector.machineId(), introspector.bootId(), introspector.pidNamespace(),
                introspector.inInitialPidNamespace());
    }

    /** Rows 1 to 4 of the precedence: the reason they give, or empty when they all pass. */
    private Optional<Reason> guard(Identity id, Optional<String> host, Optional<String> machine, Optional<String> pidns,
                                   Optional<String> boot) {
        if (id.pid() <= 0) {
            return Optional.of(Reason.NO_IDENTITY);
        }
        if (!id.host().isEmpty() && !is(host, id.host())) {
            return Optional.of(unreadable(Reason.OTHER_HOST, host));
        }
        if (!id.machine().isEmpty() && !is(machine, id.machine())) {
            return Optional.of(unreadable(Reason.OTHER_HOST, machine));
        }
        if (!id.pidns().isEmpty() && !is(pidns, id.pidns())) {
            return Optional.of(unreadable(Reason.OTHER_PID_NAMESPACE, pidns));
        }
        if (!id.boot().isEmpty() && !is(boot, id.boot())) {
            if (boot.isEmpty()) {
                return Optional.of(unreadable(Reason.IO_ERROR, boot));
            }
            // a boot id this platform never writes is no other boot's: it proves nothing
            return Optional.of(introspector.isBootId(id.boot()) ? Reason.REBOOTED : Reason.NO_FINGERPRINT);
        }
        return Optional.empty();
    }

    /** Whether {@code fact} was read and says {@code recorded}. */
    private static boolean is(Optional<String> fact, String recorded) {
        return fact.isPresent() && fact.get().equals(recorded);
    }

    /**
     * {@code reason}, unless the fact it compares could not be read on a platform that cannot
     * introspect at all: say that rather than blame the host, namespace or boot.
     */
    private Reason unreadable(Reason reason, Optional<String> fact) {
        if (fact.isEmpty() && !introspector.supported()) {
            return Reason.UNSUPPORTED_PLATFORM;
        }
        return reason;
    }

    /**
     * Rows 5 to 9 of the precedence, with row 3's rule for identities that record no namespace.
     * Null for {@link Reason#MATCHED}: a measured hot path, where a check of a live process in a
     * hook's cold JVM would otherwise load {@code Reason} only to ask it for {@code ALIVE}.
     */
    private Reason judge(Identity id, ProcessLookup lookup, boolean initialPidns) {
        // Found first: an instanceof loads the class it names, and a live process is the common case.
        if (!(lookup instanceof ProcessLookup.Found found)) {
            if (lookup instanceof ProcessLookup.Unknown unknown) {
                return unknown.reason();
            }
            return mayBeForeign(id, initialPidns) ? Reason.OTHER_PID_NAMESPACE : Reason.EXITED; // Gone
        }
        ProcessInfo info = found.info();
        if (id.start().isEmpty() || !introspector.isFingerprint(id.start())) {
            return Reason.NO_FINGERPRINT; // a start this platform never writes cannot be compared: it proves nothing
        }
        if (!introspector.sameStart(id.start(), info.start())) {
            return mayBeForeign(id, initialPidns) ? Reason.OTHER_PID_NAMESPACE : Reason.PID_REUSED;
        }
        // if, not switch: a switch on an enum loads a synthetic class on first use
        if (info.state() == ProcessState.LIVE) {
            return null; // MATCHED
        }
        return info.state() == ProcessState.ZOMBIE ? Reason.ZOMBIE : Reason.EXITED;
    }

    /**
     * The exit watch of a checker's verdicts, made here and not in the checker's own methods: the
     * verifier of a method that hands a judge to the watch loads the judge's interface, and a hook's
     * cold JVM loads this class only when it watches.
     */
    private static final class Watching {
        private Watching() {
        }

        static ExitWatch over(LivenessChecker checker) {
            return new ExitWatch(new ExitWatch.Judge() {
                @Override
                public Verdict explain(Identity identity) {
                    return checker.explain(identity);
                }

                @Override
                public List<Verdict> checkAll(List<Identity> identities) {
                    return checker.checkAll(identities);
                }
            }, new ExitWatch.Opener(checker.introspector()));
        }
    }
}
