package dev.proclive.macos;

import dev.proclive.Reason;
import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.internal.ExitEvents;
import dev.proclive.spi.internal.KernelIntrospector;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import dev.proclive.spi.internal.ProgramNames;
import java.util.Optional;

/**
 * macOS: one {@code sysctl(CTL_KERN, KERN_PROC, KERN_PROC_PID, pid)} per process through JNA.
 *
 * <ul>
 *   <li>Fingerprint: {@code p_starttime} as {@code seconds.microseconds}, absolute wall-clock
 *       time, so no boot id is recorded or needed ({@code kern.boottime} moves when the clock is
 *       stepped and would later read as a reboot).</li>
 *   <li>The call needs no permission and shows zombies ({@code p_stat == SZOMB} → DEAD
 *       {@code ZOMBIE}). A missing pid answers with length 0: that, and only that, is "gone".
 *       An answer is trusted only when it is 648 bytes long and names the pid asked.</li>
 *   <li>Host from {@code sysctlbyname("kern.hostname")}, what Go's {@code os.Hostname()} reads;
 *       no PID namespaces. Machine id: the hardware UUID ({@code IOPlatformUUID}), read once.</li>
 *   <li>If JNA cannot load, every lookup is UNKNOWN with {@code UNSUPPORTED_PLATFORM}.</li>
 * </ul>
 *
 * <p>Thread-safe. Public only for the platform switch in {@code dev.proclive}: the package is not
 * exported from the module. Reach it through {@link dev.proclive.ProcLive}.
 */
public final class MacosProcessIntrospector implements KernelIntrospector {

    /** MAXCOMLEN (sys/param.h): the kernel keeps this many bytes of a name. */
    static final int COMM_BYTES = 16;

    private final Sysctl sysctl;
    /** {@link #machineId()}, null until first asked: read once, lazily (IOKit is loaded then). */
    private volatile Optional<String> machineId;

    MacosProcessIntrospector(Sysctl sysctl) {
        this.sysctl = sysctl;
    }

    /** The introspector for this Mac; JNA loads when it is first used. */
    public static MacosProcessIntrospector system() {
        return Holder.SYSTEM;
    }

    @Override
    public ProcessLookup lookup(long pid) {
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
            return new ProcessLookup.Gone("no process has pid " + pid); // pid_t is 32 bits
        }
        byte[] buffer = new byte[KinfoProc.SIZE];
        int length;
        try {
            length = sysctl.kinfoProc((int) pid, buffer);
        } catch (ErrnoException e) {
            return errno(pid, e.errno());
        } catch (LinkageError | RuntimeException e) {
            return jnaUnavailable(e);
        }
        switch (KinfoProc.check(buffer, length, pid)) {
            case NO_PROCESS:
                return new ProcessLookup.Gone("sysctl kern.proc.pid." + pid + " knows no such process");
            case WRONG_LENGTH:
                return new ProcessLookup.Unknown(Reason.IO_ERROR, "sysctl kern.proc.pid." + pid
                        + " answered " + length + " bytes, not the " + KinfoProc.SIZE + " of a kinfo_proc");
            case OTHER_PID:
                return new ProcessLookup.Unknown(Reason.IO_ERROR,
                        "sysctl kern.proc.pid." + pid + " answered for another pid");
            default:
                KinfoProc k = KinfoProc.decode(buffer);
                return new ProcessLookup.Found(new ProcessInfo(k.pid(), k.parentPid(), k.name(), k.start(),
                        k.zombie() ? ProcessState.ZOMBIE : ProcessState.LIVE));
        }
    }

    /**
     * A failed call, never "gone", whatever its errno. errno.h: EPERM 1 (a sandbox may refuse),
     * ENOMEM 12 (the buffer was too small).
     */
    private static ProcessLookup errno(long pid, int errno) {
        String call = "sysctl kern.proc.pid." + pid + " failed with errno " + errno;
        switch (errno) {
            case 0:
                return new ProcessLookup.Unknown(Reason.IO_ERROR, call + " (it failed without setting one)");
            case 1:
                return new ProcessLookup.Unknown(Reason.ACCESS_DENIED, call + " (EPERM)");
            case 12:
                return new ProcessLookup.Unknown(Reason.IO_ERROR, call + " (ENOMEM: kinfo_proc grew?)");
            default:
                return new ProcessLookup.Unknown(Reason.IO_ERROR, call);
        }
    }

    private static ProcessLookup jnaUnavailable(Throwable e) {
        return new ProcessLookup.Unknown(Reason.UNSUPPORTED_PLATFORM,
                "JNA could not call sysctl: " + e);
    }

    @Override
    public ProcessLookup self() {
        long pid;
        try {
            pid = sysctl.getpid();
        } catch (LinkageError | RuntimeException e) {
            return jnaUnavailable(e);
        }
        return lookup(pid);
    }

    /**
     * From {@code sysctl(KERN_PROCARGS2)}, which answers for processes of the same user only: for
     * others, and on any failure, no names beyond {@code p_comm}.
     */
    @Override
    public ProgramNames programNames(long pid) {
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
            return ProgramNames.UNKNOWN;
        }
        try {
            int argMax = sysctl.argMax();
            if (argMax <= 0 || argMax > MAX_ARGS_BYTES) {
                argMax = MAX_ARGS_BYTES;
            }
            byte[] buffer = new byte[argMax + ARGS_SLACK]; // an answer that fills it holds only the tail
            return ProcArgs.decode(buffer, sysctl.procArgs((int) pid, buffer));
        } catch (ErrnoException | LinkageError | RuntimeException e) {
            return ProgramNames.UNKNOWN;
        }
    }

    /** A bound on the arguments buffer, whatever {@code kern.argmax} says (1 MiB on current macOS). */
    private static final int MAX_ARGS_BYTES = 4 << 20;
    /** Room beyond {@code kern.argmax} for the exec path, argc and padding. */
    private static final int ARGS_SLACK = 8 << 10;

    /** Now less a second, as {@code seconds.micros}: no process started from now on started before it. */
    @Override
    public Optional<String> startFloor() {
        java.time.Instant floor = java.time.Instant.now().minusSeconds(1);
        return Optional.of(String.format(java.util.Locale.ROOT, "%d.%06d", floor.getEpochSecond(), floor.getNano() / 1000));
    }

    /**
     * Every process's environment from {@code KERN_PROCARGS2} ({@link ProcArgs#environmentHolds}),
     * skipping those started before {@code startedAfter}. Another user's process answers EINVAL
     * (unless this one is root): the scan is then incomplete. A listed process that ended before it
     * was read (or a new zombie) makes a pass inconclusive, and another is made, up to
     * {@link EnvironmentScan#PASSES}; a carrier of a user other than {@code uid} makes it incomplete.
     */
    @Override
    public EnvironmentScan scanEnvironments(String variable, java.util.function.Predicate<String> value, long uid,
                                            Optional<String> startedAfter) {
        return EnvironmentScan.asProof(zombies -> pass(variable, value, uid, startedAfter, zombies));
    }

    /** One pass; {@code zombies}: those (pid:start) met in passes before, and this one's added. */
    private EnvironmentScan pass(String variable, java.util.function.Predicate<String> value, long uid,
                                 Optional<String> startedAfter, java.util.Set<String> zombies) {
        int[] pids;
        int argMax;
        try {
            pids = sysctl.pids();
            argMax = sysctl.argMax();
        } catch (ErrnoException | LinkageError | RuntimeException e) {
            return EnvironmentScan.incomplete("cannot list processes: " + e);
        }
        java.math.BigDecimal floor = null;
        if (startedAfter.isPresent()) {
            floor = seconds(startedAfter.get());
            if (floor == null) {
                return EnvironmentScan.incomplete("the floor " + startedAfter.get() + " is not seconds.microseconds");
            }
        }
        byte[] buffer = new byte[argsBuffer(argMax)];
        java.util.List<ProcessInfo> carriers = new java.util.ArrayList<>();
        String unread = "";
        String vanished = "";
        String usersVanished = ""; // of those, one that may have been uid's: it may have forked a carrier
        for (int pid : pids) {
            if (pid <= 0) {
                continue;
            }
            ProcessLookup lookup = lookup(pid);
            if (lookup instanceof ProcessLookup.Gone) {
                vanished = "pid " + pid + " ended before it could be read";
                usersVanished = vanished; // whose it was cannot be told
                continue;
            }
            if (!(lookup instanceof ProcessLookup.Found found)) {
                unread = "pid " + pid + ": " + ((ProcessLookup.Unknown) lookup).detail();
                continue;
            }
            ProcessInfo info = found.info();
            java.math.BigDecimal start = seconds(info.start());
            if (floor != null && start != null && start.compareTo(floor) < 0) {
                continue;
            }
            if (info.state() == ProcessState.ZOMBIE) {
                if (zombies.add(pid + ":" + info.start())) {
                    vanished = "pid " + pid + " ended during the pass"; // what it forked is listed next pass
                    usersVanished = mayBeUsers(pid, uid) ? vanished : usersVanished;
                }
                continue;
            }
            EnvironmentScan one = read(info, variable, value, buffer);
            if (!one.complete()) {
                if (one.passAgain()) {
                    vanished = one.detail();
                    usersVanished = mayBeUsers(pid, uid) ? vanished : usersVanished;
                } else {
                    unread = one.detail();
                }
            } else if (!one.carriers().isEmpty()) {
                java.util.OptionalLong owner = userId(pid);
                if (owner.isPresent() && owner.getAsLong() == uid) {
                    carriers.add(info);
                } else {
                    unread = "pid " + pid + " carries it but runs as " + (owner.isPresent()
                            ? "uid " + owner.getAsLong() + ", not uid " + uid : "a user that cannot be read");
                }
            }
        }
        return EnvironmentScan.ofPass(carriers, unread, vanished, usersVanished);
    }

    /** Whether process {@code pid}, which ended, may have been {@code uid}'s: it was, or it cannot be told. */
    private boolean mayBeUsers(int pid, long uid) {
        java.util.OptionalLong owner = userId(pid);
        return owner.isEmpty() || owner.getAsLong() == uid;
    }

    @Override
    public EnvironmentScan readEnvironment(long pid, String variable, java.util.function.Predicate<String> value) {
        if (!(lookup(pid) instanceof ProcessLookup.Found found)) {
            return EnvironmentScan.incomplete("pid " + pid + " cannot be read");
        }
        int argMax;
        try {
            argMax = sysctl.argMax();
        } catch (ErrnoException | LinkageError | RuntimeException e) {
            return EnvironmentScan.incomplete("cannot size a process's arguments: " + e);
        }
        EnvironmentScan one = read(found.info(), variable, value, new byte[argsBuffer(argMax)]);
        return one.passAgain() ? EnvironmentScan.incomplete(one.detail()) : one;
    }

    private static int argsBuffer(int argMax) {
        return (argMax <= 0 || argMax > MAX_ARGS_BYTES ? MAX_ARGS_BYTES : argMax) + ARGS_SLACK;
    }

    /** One process's environment, checked to be the process {@code info} read (not a later one under its pid). */
    private EnvironmentScan read(ProcessInfo info, String variable, java.util.function.Predicate<String> value,
                                 byte[] buffer) {
        long pid = info.pid();
        Optional<Boolean> holds;
        try {
            holds = ProcArgs.environmentHolds(buffer, sysctl.procArgs((int) pid, buffer), variable, value);
        } catch (ErrnoException | RuntimeException e) {
            if (lookup(pid) instanceof ProcessLookup.Gone) {
                return new EnvironmentScan(java.util.List.of(), false, "pid " + pid + " ended before it could be read", true);
            }
            return EnvironmentScan.incomplete("pid " + pid + ": its environment is not readable by this user");
        }
        if (!(lookup(pid) instanceof ProcessLookup.Found again && again.info().start().equals(info.start()))) {
            return new EnvironmentScan(java.util.List.of(), false, "pid " + pid + " ended while it was read", true);
        }
        if (holds.isEmpty()) {
            return EnvironmentScan.incomplete("pid " + pid + ": its arguments and environment do not fit, or were cut short");
        }
        return new EnvironmentScan(holds.get() ? java.util.List.of(info) : java.util.List.of(), true, "");
    }

    /** {@code kp_eproc.e_ucred.cr_uid} ({@link KinfoProc#uid()}). */
    @Override
    public java.util.OptionalLong userId(long pid) {
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
            return java.util.OptionalLong.empty();
        }
        byte[] buffer = new byte[KinfoProc.SIZE];
        try {
            int length = sysctl.kinfoProc((int) pid, buffer);
            if (KinfoProc.check(buffer, length, pid) != KinfoProc.Status.VALID) {
                return java.util.OptionalLong.empty();
            }
            return java.util.OptionalLong.of(KinfoProc.decode(buffer).uid());
        } catch (ErrnoException | LinkageError | RuntimeException e) {
            return java.util.OptionalLong.empty();
        }
    }

    /** A start fingerprint or floor as seconds ({@code seconds.microseconds}), or null when it is not one. */
    private static java.math.BigDecimal seconds(String start) {
        if (!start.matches("[0-9]{1,18}\\.[0-9]{6}")) {
            return null;
        }
        return new java.math.BigDecimal(start);
    }

    /**
     * A start as this platform writes it, {@code "%d.%06d"} of {@code p_starttime}: the seconds as
     * {@code %d} prints them (no sign, no leading zero: {@link KernelIntrospector#isPlainDecimal}),
     * a point, six digits of microseconds.
     */
    @Override
    public boolean isFingerprint(String recorded) {
        int point = recorded.indexOf('.');
        if (point < 1 || recorded.length() - point - 1 != 6
                || !KernelIntrospector.isPlainDecimal(recorded, 0, point, 19)) {
            return false;
        }
        for (int i = point + 1; i < recorded.length(); i++) {
            char c = recorded.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    @Override
    public Optional<String> bootId() {
        return Optional.empty();
    }

    @Override
    public Optional<String> hostName() {
        try {
            String name = sysctl.hostName();
            return name == null || name.isEmpty() ? Optional.empty() : Optional.of(name);
        } catch (LinkageError | RuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public Optional<String> pidNamespace() {
        return Optional.empty();
    }

    /** The hardware UUID ({@link PlatformUuid}), read on first use and kept. */
    @Override
    public Optional<String> machineId() {
        Optional<String> m = machineId;
        if (m == null) {
            try {
                m = PlatformUuid.parse(sysctl.platformUuid());
            } catch (LinkageError | RuntimeException e) {
                m = Optional.empty(); // no IOKit, or JNA: no machine recorded, and one recorded is judged UNKNOWN
            }
            machineId = m;
        }
        return m;
    }

    /** A kqueue ({@link KqueueEvents}), for the system introspector only. */
    @Override
    public Optional<ExitEvents> openExitEvents() {
        return this == Holder.SYSTEM ? KqueueEvents.open() : Optional.empty();
    }

    /** The kernel keeps {@value #COMM_BYTES} bytes of a name: a longer one matches its truncation. */
    @Override
    public boolean nameMatches(String processName, String name) {
        return ProcessIntrospector.matchesTruncated(processName, name, COMM_BYTES);
    }

    @Override
    public String toString() {
        return "MacosProcessIntrospector";
    }


    /**
     * Built when first used. Without JNA on the class path even linking {@link SystemBSysctl}
     * fails: then every call answers as a JNA that cannot load, never an error to the caller.
     */
    private static final class Holder {
        static final MacosProcessIntrospector SYSTEM = new MacosProcessIntrospector(load());

        private static Sysctl load() {
            try {
                return new SystemBSysctl();
            } catch (LinkageError e) {
                return new Unavailable(e);
            }
        }
    }

    /** The kernel calls when JNA cannot be linked: each one fails with the error that said so. */
    private record Unavailable(LinkageError cause) implements Sysctl {
        @Override
        public long getpid() {
            throw unavailable();
        }

        @Override
        public int kinfoProc(int pid, byte[] buffer) {
            throw unavailable();
        }

        @Override
        public int argMax() {
            throw unavailable();
        }

        @Override
        public int procArgs(int pid, byte[] buffer) {
            throw unavailable();
        }

        @Override
        public String hostName() {
            throw unavailable();
        }

        @Override
        public int[] pids() {
            throw unavailable();
        }

        @Override
        public String platformUuid() {
            throw unavailable();
        }

        private IllegalStateException unavailable() {
            return new IllegalStateException("JNA cannot be linked: " + cause, cause);
        }
    }
}
