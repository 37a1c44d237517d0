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
 * <p>Instances are immutable and thread-safe; no method returns null or throws for a non-null
 * identity.
 */
public final class LivenessChecker {

    private final ProcessIntrospector introspector;
    private final Facts facts;

    private LivenessChecker(ProcessIntrospector introspector) {
        this.introspector = introspector;
        this.facts = Facts.of(introspector);
    }

    /**
     * A checker over {@code introspector}.
     *
     * @throws NullPointerException if {@code introspector} is null
     */
    public static LivenessChecker of(ProcessIntrospector introspector) {
        return new LivenessChecker(Objects.requireNonNull(introspector, "introspector"));
    }

    /** The checker for the running OS, the one {@link ProcLive} uses. */
    public static LivenessChecker system() {
        return Platform.CHECKER;
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
        Verdict guard = guard(identity, facts);
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
        Verdict guard = guard(identity, facts);
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
        Facts once = Facts.snapshot(introspector);
        Map<Long, ProcessLookup> lookups = new HashMap<>();
        List<Verdict> verdicts = new ArrayList<>(ids.size());
        for (Identity id : ids) {
            Verdict guard = guard(id, once);
            verdicts.add(guard != null ? guard
                    : judge(id, lookups.computeIfAbsent(id.pid(), introspector::lookup)));
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
        Optional<String> host = facts.hostName();
        if (host.isEmpty() || info.state() != ProcessState.LIVE) {
            return Optional.empty();
        }
        return Optional.of(new Identity(info.pid(), info.start(),
                introspector.bootId().orElse(""), host.get(), info.name(),
                introspector.pidNamespace().orElse("")));
    }

    /** Rows 1 to 4 of the precedence; null when they all pass, allocating nothing then. */
    private static Verdict guard(Identity id, Facts facts) {
        if (id.pid() <= 0) {
            return Verdict.of(Reason.NO_IDENTITY, "no pid recorded (pid " + id.pid() + ")");
        }
        if (!id.host().isEmpty()) {
            Optional<String> host = facts.hostName();
            if (host.isEmpty()) {
                return unreadable(facts, Reason.OTHER_HOST, "this host's name cannot be read");
            }
            if (!host.get().equals(id.host())) {
                return Verdict.of(Reason.OTHER_HOST,
                        "recorded on host " + id.host() + ", this is " + host.get());
            }
        }
        if (!id.pidns().isEmpty()) {
            Optional<String> pidns = facts.pidNamespace();
            if (pidns.isEmpty()) {
                return unreadable(facts, Reason.OTHER_PID_NAMESPACE,
                        "recorded in PID namespace " + id.pidns() + ", this one cannot be read");
            }
            if (!pidns.get().equals(id.pidns())) {
                return Verdict.of(Reason.OTHER_PID_NAMESPACE, "recorded in PID namespace "
                        + id.pidns() + ", this process is in " + pidns.get());
            }
        }
        if (!id.boot().isEmpty()) {
            Optional<String> boot = facts.bootId();
            if (boot.isEmpty()) {
                return unreadable(facts, Reason.IO_ERROR, "the current boot id cannot be read");
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
    private static Verdict unreadable(Facts facts, Reason reason, String detail) {
        if (facts.self() instanceof ProcessLookup.Unknown unknown
                && unknown.reason() == Reason.UNSUPPORTED_PLATFORM) {
            return Verdict.of(Reason.UNSUPPORTED_PLATFORM, unknown.detail());
        }
        return Verdict.of(reason, detail);
    }

    private static Verdict judge(Identity id, ProcessLookup lookup) {
        Reason reason = lookup.reasonFor(id.start());
        String subject = "pid " + id.pid() + (id.name().isEmpty() ? "" : " (" + id.name() + ")");
        String detail;
        if (lookup instanceof ProcessLookup.Found found) {
            ProcessInfo info = found.info();
            detail = switch (reason) {
                case NO_FINGERPRINT -> subject + " is running as " + info.name()
                        + ", but no start fingerprint was recorded to prove it is the same process";
                case PID_REUSED -> subject + " now belongs to " + info.name() + " started at "
                        + info.start() + ", not at " + id.start();
                case ZOMBIE -> subject + " has exited and waits to be reaped by its parent";
                case EXITED -> subject + " has exited and is being torn down";
                default -> subject + " is running, started at " + info.start();
            };
        } else if (lookup instanceof ProcessLookup.Gone gone) {
            detail = subject + " is gone" + (gone.detail().isEmpty() ? "" : ": " + gone.detail());
        } else {
            detail = ((ProcessLookup.Unknown) lookup).detail();
        }
        return Verdict.of(reason, detail);
    }

    /** What the guards compare an identity with. */
    private interface Facts {
        Optional<String> hostName();

        Optional<String> bootId();

        Optional<String> pidNamespace();

        /** The calling process, read only when a fact is missing. */
        ProcessLookup self();

        /**
         * The introspector's answers, read as each guard needs them; the host name is kept for
         * {@link Live#HOST_TTL_NANOS} (it can change, but rarely, and reading it costs a syscall).
         */
        static Facts of(ProcessIntrospector introspector) {
            return new Live(introspector);
        }

        /** See {@link #of}. */
        final class Live implements Facts {
            static final long HOST_TTL_NANOS = 1_000_000_000L;

            private final ProcessIntrospector introspector;
            private volatile Host host;

            Live(ProcessIntrospector introspector) {
                this.introspector = introspector;
            }

            @Override
            public Optional<String> hostName() {
                Host h = host;
                long now = System.nanoTime();
                if (h == null || now - h.readAt > HOST_TTL_NANOS) {
                    h = new Host(introspector.hostName(), now);
                    host = h;
                }
                return h.name;
            }

            @Override
            public Optional<String> bootId() {
                return introspector.bootId();
            }

            @Override
            public Optional<String> pidNamespace() {
                return introspector.pidNamespace();
            }

            @Override
            public ProcessLookup self() {
                return introspector.self();
            }

            /** A host name and when it was read. */
            private static final class Host {
                final Optional<String> name;
                final long readAt;

                Host(Optional<String> name, long readAt) {
                    this.name = name;
                    this.readAt = readAt;
                }
            }
        }

        /** The introspector's answers read once, for a batch. */
        static Facts snapshot(ProcessIntrospector introspector) {
            record Snapshot(Optional<String> hostName, Optional<String> bootId,
                            Optional<String> pidNamespace, ProcessIntrospector introspector)
                    implements Facts {
                @Override
                public ProcessLookup self() {
                    return introspector.self();
                }
            }
            return new Snapshot(introspector.hostName(), introspector.bootId(),
                    introspector.pidNamespace(), introspector);
        }
    }
}
