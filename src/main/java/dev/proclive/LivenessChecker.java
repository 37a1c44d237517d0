package dev.proclive;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import dev.proclive.linux.LinuxProcessIntrospector;
import dev.proclive.macos.MacosProcessIntrospector;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The verdict rules of {@link ProcLive} over a chosen {@link ProcessIntrospector}. Use
 * {@link ProcLive} for the running OS; use this class to plug in another introspector (a test
 * double, a platform proclive does not ship).
 *
 * <p>The precedence, first match wins:
 * <ol>
 *   <li>{@code pid <= 0} → UNKNOWN {@link Reason#NO_IDENTITY}</li>
 *   <li>{@code host} recorded and not this host (or this host unreadable) → UNKNOWN
 *       {@link Reason#OTHER_HOST}</li>
 *   <li>{@code pidns} recorded and not this process's PID namespace → UNKNOWN
 *       {@link Reason#OTHER_PID_NAMESPACE}</li>
 *   <li>{@code boot} recorded: unreadable now → UNKNOWN {@link Reason#IO_ERROR}; another boot →
 *       DEAD {@link Reason#REBOOTED}</li>
 *   <li>the process: proven gone → DEAD {@link Reason#EXITED}; unreadable → UNKNOWN with the
 *       introspector's reason</li>
 *   <li>{@code start} empty → UNKNOWN {@link Reason#NO_FINGERPRINT}</li>
 *   <li>{@code start} differs → DEAD {@link Reason#PID_REUSED}</li>
 *   <li>zombie → DEAD {@link Reason#ZOMBIE}</li>
 *   <li>otherwise ALIVE {@link Reason#MATCHED}</li>
 * </ol>
 *
 * <p>The host name is read at most about once a second; the boot id and PID namespace are
 * cached by the introspector, which knows whether they can change. Instances are thread-safe; no
 * method returns null or throws for a non-null identity.
 */
public final class LivenessChecker {

    private static final LivenessChecker SYSTEM = of(forOs(System.getProperty("os.name", "")));

    /** How long a host name read is reused. */
    static final long HOST_TTL_NANOS = 1_000_000_000L;

    private final ProcessIntrospector introspector;

    /**
     * The host, boot id and namespace when fixed for a batch ({@link #checkAll}); null for a
     * checker that reads them from the introspector as needed.
     */
    private final Optional<String> fixedHost;
    private final Optional<String> fixedBoot;
    private final Optional<String> fixedPidns;

    /**
     * The last host name read and when. Two volatiles, not one pair: a reader that sees a new
     * time with the old name serves a name that was current less than a period ago.
     */
    private volatile Optional<String> host;
    private volatile long hostReadAt;

    private LivenessChecker(ProcessIntrospector introspector, Optional<String> host, Optional<String> boot,
                            Optional<String> pidns) {
        this.introspector = introspector;
        this.fixedHost = host;
        this.fixedBoot = boot;
        this.fixedPidns = pidns;
    }

    /**
     * A checker over {@code introspector}.
     *
     * @throws NullPointerException if {@code introspector} is null
     */
    public static LivenessChecker of(ProcessIntrospector introspector) {
        return new LivenessChecker(Objects.requireNonNull(introspector, "introspector"), null, null, null);
    }

    /** The checker for the running OS, the one {@link ProcLive} uses. */
    public static LivenessChecker system() {
        return SYSTEM;
    }

    /**
     * The platform switch, decided once from {@code os.name}: an OS proclive does not know gets
     * the unsupported introspector, never an exception.
     */
    static ProcessIntrospector forOs(String osName) {
        String os = osName.toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            return LinuxProcessIntrospector.system();
        }
        if (os.startsWith("mac") || os.startsWith("darwin")) {
            return MacosProcessIntrospector.system();
        }
        return new UnsupportedProcessIntrospector(osName);
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
        Verdict guard = guard(identity);
        if (guard != null) {
            return guard.liveness();
        }
        return introspector.probe(identity.pid(), identity.start()).liveness();
    }

    /**
     * Like {@link #check(Identity)}, with the reason and a short detail for a person.
     *
     * @throws NullPointerException if {@code identity} is null
     */
    public Verdict explain(Identity identity) {
        Objects.requireNonNull(identity, "identity");
        Verdict guard = guard(identity);
        if (guard != null) {
            return guard;
        }
        return judge(identity, introspector.lookup(identity.pid()));
    }

    /**
     * One verdict per identity, in the order given: what {@link #explain(Identity)} says of each,
     * reading the host, boot id and namespace once and each distinct pid once.
     *
     * @throws NullPointerException if {@code identities} or one of its elements is null
     */
    public List<Verdict> checkAll(Collection<Identity> identities) {
        List<Identity> ids = List.copyOf(identities);
        LivenessChecker once = new LivenessChecker(introspector, hostName(), bootId(), pidNamespace());
        Map<Long, ProcessLookup> lookups = new HashMap<>();
        List<Verdict> verdicts = new ArrayList<>(ids.size());
        for (Identity id : ids) {
            Verdict guard = once.guard(id);
            if (guard == null) {
                ProcessLookup lookup = lookups.get(id.pid());
                if (lookup == null) {
                    lookup = introspector.lookup(id.pid());
                    lookups.put(id.pid(), lookup);
                }
                guard = judge(id, lookup);
            }
            verdicts.add(guard);
        }
        return verdicts;
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
        return record(introspector.lookupProcess(pid));
    }

    /** The identity of the calling process, or empty as for {@link #identify(long)}. */
    public Optional<Identity> current() {
        return record(introspector.self());
    }

    Optional<Identity> record(ProcessLookup lookup) {
        if (!(lookup instanceof ProcessLookup.Found found)) {
            return Optional.empty();
        }
        return record(found.info());
    }

    Optional<Identity> record(ProcessInfo info) {
        Optional<String> host = hostName();
        if (host.isEmpty() || info.state() != ProcessState.LIVE) {
            return Optional.empty();
        }
        return Optional.of(new Identity(info.pid(), info.start(), bootId().orElse(""), host.get(),
                info.name(), pidNamespace().orElse("")));
    }

    private Optional<String> hostName() {
        if (fixedHost != null) {
            return fixedHost;
        }
        Optional<String> h = host;
        long now = System.nanoTime();
        if (h == null || now - hostReadAt > HOST_TTL_NANOS) {
            h = introspector.hostName();
            hostReadAt = now;
            host = h;
        }
        return h;
    }

    private Optional<String> bootId() {
        return fixedBoot != null ? fixedBoot : introspector.bootId();
    }

    private Optional<String> pidNamespace() {
        return fixedPidns != null ? fixedPidns : introspector.pidNamespace();
    }

    /** Rows 1 to 4 of the precedence; null when they all pass, allocating nothing then. */
    private Verdict guard(Identity id) {
        if (id.pid() <= 0) {
            return Verdict.of(Reason.NO_IDENTITY, "no pid recorded (pid " + id.pid() + ")");
        }
        if (!id.host().isEmpty()) {
            Optional<String> host = hostName();
            if (host.isEmpty()) {
                return unreadable(Reason.OTHER_HOST, "this host's name cannot be read");
            }
            if (!host.get().equals(id.host())) {
                return Verdict.of(Reason.OTHER_HOST,
                        "recorded on host " + id.host() + ", this is " + host.get());
            }
        }
        if (!id.pidns().isEmpty()) {
            Optional<String> pidns = pidNamespace();
            if (pidns.isEmpty()) {
                return unreadable(Reason.OTHER_PID_NAMESPACE,
                        "recorded in PID namespace " + id.pidns() + ", this one cannot be read");
            }
            if (!pidns.get().equals(id.pidns())) {
                return Verdict.of(Reason.OTHER_PID_NAMESPACE, "recorded in PID namespace "
                        + id.pidns() + ", this process is in " + pidns.get());
            }
        }
        if (!id.boot().isEmpty()) {
            Optional<String> boot = bootId();
            if (boot.isEmpty()) {
                return unreadable(Reason.IO_ERROR, "the current boot id cannot be read");
            }
            if (!boot.get().equals(id.boot())) {
                return Verdict.of(Reason.REBOOTED,
                        "recorded in boot " + id.boot() + ", this is boot " + boot.get());
            }
        }
        return null;
    }

    /**
     * A fact the identity recorded cannot be read here. On a platform that cannot introspect at
     * all, say that rather than blame the host, namespace or boot.
     */
    private Verdict unreadable(Reason reason, String detail) {
        if (introspector.self() instanceof ProcessLookup.Unknown unknown
                && unknown.reason() == Reason.UNSUPPORTED_PLATFORM) {
            return Verdict.of(Reason.UNSUPPORTED_PLATFORM, unknown.detail());
        }
        return Verdict.of(reason, detail);
    }

    /** Rows 5 to 9 and the words for them; one builder, as {@link #checkAll} calls it per identity. */
    private static Verdict judge(Identity id, ProcessLookup lookup) {
        Reason reason = lookup.reasonFor(id.start());
        if (lookup instanceof ProcessLookup.Unknown unknown) {
            return Verdict.of(reason, unknown.detail());
        }
        StringBuilder d = new StringBuilder(96).append("pid ").append(id.pid());
        if (!id.name().isEmpty()) {
            d.append(" (").append(id.name()).append(')');
        }
        if (lookup instanceof ProcessLookup.Gone gone) {
            d.append(" is gone");
            if (!gone.detail().isEmpty()) {
                d.append(": ").append(gone.detail());
            }
            return Verdict.of(reason, d.toString());
        }
        ProcessInfo info = ((ProcessLookup.Found) lookup).info();
        switch (reason) {
            case NO_FINGERPRINT:
                d.append(" is running as ").append(info.name())
                        .append(", but no start fingerprint was recorded to prove it is the same process");
                break;
            case PID_REUSED:
                d.append(" now belongs to ").append(info.name()).append(" started at ").append(info.start())
                        .append(", not at ").append(id.start());
                break;
            case ZOMBIE:
                d.append(" has exited and waits to be reaped by its parent");
                break;
            case EXITED:
                d.append(" has exited and is being torn down");
                break;
            default:
                d.append(" is running, started at ").append(info.start());
        }
        return Verdict.of(reason, d.toString());
    }
}
