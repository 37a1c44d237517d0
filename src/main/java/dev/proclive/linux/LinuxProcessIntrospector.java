package dev.proclive.linux;

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
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Linux: reads {@code /proc} (proc(5)).
 *
 * <ul>
 *   <li>Fingerprint: field 22 of {@code /proc/PID/stat} as written there (clock ticks since boot,
 *       USER_HZ 100: a PID reused within the same 10 ms tick cannot be told apart).</li>
 *   <li>Zombies: state {@code Z} is a zombie unless {@code Threads:} in {@code /proc/PID/status}
 *       shows other threads still running; {@code X} is dead.</li>
 *   <li>A missing entry proves the process gone, except where the procfs hides pids
 *       ({@code hidepid=}, {@code subset=pid} in {@code /proc/self/mountinfo}) from a task
 *       without CAP_SYS_PTRACE in the initial user namespace (a child user namespace shows every
 *       capability, but they do not count against an outer procfs): then {@code kill(pid, 0)}
 *       decides (ESRCH gone, EPERM present), through JNA loaded at that moment and never before.</li>
 *   <li>In a time namespace, start times are shown shifted by its boottime offset: the offset is
 *       taken off, so fingerprints are those of the initial time namespace ({@link BootOffset}).</li>
 *   <li>A {@code /proc} mounted for another PID namespace (its {@code /proc/self/status} lists more
 *       than one {@code NSpid}, or {@code /proc/self} does not resolve) is trusted for nothing.</li>
 *   <li>Machine id from {@code /etc/machine-id}, else {@code /var/lib/dbus/machine-id}, read once
 *       (machine-id(5)).</li>
 *   <li>Boot id from {@code /proc/sys/kernel/random/boot_id}, read once; host from
 *       {@code /proc/sys/kernel/hostname}; PID namespace from the inode in
 *       {@code /proc/self/ns/pid}, read once.</li>
 * </ul>
 *
 * <p>Thread-safe. Public only for the platform switch in {@code dev.proclive}: the package is not
 * exported from the module. Reach it through {@link dev.proclive.ProcLive}.
 */
public final class LinuxProcessIntrospector implements KernelIntrospector {

    private static final LinuxProcessIntrospector SYSTEM = new LinuxProcessIntrospector(ProcMount.system(), "/proc", null);

    /** TASK_COMM_LEN (16) less the terminating NUL: the kernel keeps this many bytes of a name. */
    static final int COMM_BYTES = 15;

    /** The {@code /proc} read: its view and readers. */
    private final ProcMount mount;
    private final String procRoot;
    private final PidPresence presence;
    /**
     * {@link Missing#hidesPids}, null until a missing entry first asks. Apart from the view so that
     * a check of a live process never reads mountinfo; it depends on nothing else read before it.
     */
    private volatile Boolean hidesPids;

    /**
     * @param procRoot where procfs is mounted ({@code /proc}; a directory of fixtures in tests)
     * @param machineRoot what {@code /etc/machine-id} is found below ({@code ""}; fixtures in tests)
     * @param presence how to ask whether a pid exists when procfs hides it; null for kill(2)
     * @param opened   told every path opened or link read; null but in tests that count them
     */
    LinuxProcessIntrospector(String procRoot, String machineRoot, PidPresence presence, Consumer<String> opened) {
        this(new ProcMount(procRoot, machineRoot, opened), procRoot, presence);
    }

    private LinuxProcessIntrospector(ProcMount mount, String procRoot, PidPresence presence) {
        this.mount = mount;
        this.procRoot = procRoot;
        this.presence = presence;
    }

    /** The introspector for this machine's {@code /proc}. */
    public static LinuxProcessIntrospector system() {
        return SYSTEM;
    }

    @Override
    public ProcessLookup lookup(long pid) {
        return read(pid, false);
    }

    @Override
    public ProcessLookup lookupProcess(long pid) {
        return read(pid, true);
    }

    @Override
    public ProcessLookup self() {
        ProcView v = view();
        if (v.distrust().isPresent()) {
            return v.distrust().get();
        }
        ProcReader r = reader();
        String path = procRoot + "/self/stat";
        int status = r.read(path, false);
        if (status != ProcReader.OK) {
            return new ProcessLookup.Unknown(
                    status == ProcReader.DENIED ? Reason.ACCESS_DENIED : Reason.IO_ERROR,
                    path + ": " + r.error());
        }
        String problem = r.locate(r.buffer(), r.length());
        return problem == null ? new ProcessLookup.Found(info(r, v)) : malformed(path, problem);
    }

    /**
     * A start as this platform writes it: field 22 of {@code stat}, clock ticks since boot, as the
     * kernel prints an unsigned number — decimal digits without a sign or a leading zero, at most 19
     * ({@link KernelIntrospector#isPlainDecimal}; a loop: no regex on a check's path).
     */
    @Override
    public boolean isFingerprint(String recorded) {
        return KernelIntrospector.isPlainDecimal(recorded, 0, recorded.length(), 19);
    }

    /** A boot id as the kernel writes it: a UUID in lowercase, {@code 8-4-4-4-12} hex digits. */
    @Override
    public boolean isBootId(String recorded) {
        if (recorded.length() != 36) {
            return false;
        }
        for (int i = 0; i < 36; i++) {
            char c = recorded.charAt(i);
            boolean ok = i == 8 || i == 13 || i == 18 || i == 23 ? c == '-' : c >= '0' && c <= '9' || c >= 'a' && c <= 'f';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean sameStart(String recorded, String current) {
        return view().sameStart(recorded, current);
    }

    private ProcessLookup read(long pid, boolean processOnly) {
        if (pid <= 0) {
            return new ProcessLookup.Gone("no process has pid " + pid);
        }
        ProcView v = view();
        if (v.distrust().isPresent()) {
            return v.distrust().get();
        }
        ProcReader r = reader();
        String path = r.path(procRoot, pid, "stat");
        int status = r.read(path, false);
        if (status != ProcReader.OK) {
            return Missing.lookup(this, pid, path, status, r);
        }
        String problem = r.locate(r.buffer(), r.length());
        if (problem != null) {
            return malformed(path, problem);
        }
        if (r.pid() != pid) {
            return malformed(path, "it names pid " + r.pid());
        }
        ProcessInfo info = r.lastInfo;
        if (info == null || v.shifted() || !r.says(info)) {
            if (v.shifted() && BootOffset.wrapped(r.startTicks())) {
                return new ProcessLookup.Unknown(Reason.NO_FINGERPRINT, "pid " + pid + " started before this"
                        + " process's time namespace begins (a negative boottime offset), so its start is shown"
                        + " wrapped around and cannot be compared");
            }
            info = info(r, v);
            r.lastInfo = info;
        }
        if (processOnly || info.state() == ProcessState.ZOMBIE) {
            return withStatus(info, processOnly, r);
        }
        return new ProcessLookup.Found(info);
    }

    /** The located line as a process, its start converted out of this process's time namespace. */
    private static ProcessInfo info(ProcReader line, ProcView v) {
        ProcessInfo info = line.info();
        if (!v.shifted()) {
            return info;
        }
        return new ProcessInfo(info.pid(), info.parentPid(), info.name(),
                v.fingerprint(line.startTicks()), info.state());
    }

    /**
     * What {@code /proc/PID/status} adds to {@code info}. {@code /proc/TID/stat} opens for any
     * thread though the directory lists only processes: {@code Tgid:} tells them apart when
     * {@code processOnly}. A {@code Z} main thread whose other threads still run is a live process:
     * {@code Threads:} counts them.
     */
    private ProcessLookup withStatus(ProcessInfo info, boolean processOnly, ProcReader r) {
        long pid = info.pid();
        String path = r.path(procRoot, pid, "status");
        int status = r.read(path, true);
        if (status != ProcReader.OK) {
            return Missing.lookup(this, pid, path, status, r);
        }
        StatusFile s = StatusFile.parse(r.buffer(), r.length());
        if (processOnly && s.tgid() != pid) {
            return new ProcessLookup.Gone(pid + " is a thread of process " + s.tgid() + ", not a process");
        }
        if (info.state() == ProcessState.ZOMBIE && s.threads() > 1) {
            info = new ProcessInfo(pid, info.parentPid(), info.name(), info.start(), ProcessState.LIVE);
        }
        return new ProcessLookup.Found(info);
    }

    private static ProcessLookup.Unknown malformed(String path, String problem) {
        return new ProcessLookup.Unknown(Reason.IO_ERROR, "malformed " + path + ": " + problem);
    }

    private ProcReader reader() {
        return mount.reader();
    }

    private boolean hidesPids() {
        Boolean h = hidesPids;
        if (h == null) {
            h = Missing.hidesPids(procRoot, reader());
            hidesPids = h;
        }
        return h;
    }

    /** What this {@code /proc} looks like, read on first use and kept once it is settled. */
    ProcView view() {
        return mount.view();
    }

    /**
     * {@code /proc/PID/exe} (a link; EACCES for another user's process: then no executable name)
     * and the first NUL-terminated word of {@code /proc/PID/cmdline}.
     */
    @Override
    public ProgramNames programNames(long pid) {
        if (pid <= 0 || view().distrust().isPresent()) {
            return ProgramNames.UNKNOWN;
        }
        ProcReader r = reader();
        return new ProgramNames(r.executableName(procRoot, pid), r.argv0Name(procRoot, pid));
    }

    /** As {@link #programNames} reads them, without making one: an owner walk in a cold JVM loads no ProgramNames. */
    @Override
    public boolean programNamedAnyOf(long pid, String[] names) {
        if (pid <= 0 || view().distrust().isPresent()) {
            return false;
        }
        ProcReader r = reader();
        return oneOf(r.executableName(procRoot, pid), names) || oneOf(r.argv0Name(procRoot, pid), names);
    }

    private static boolean oneOf(String name, String[] names) {
        if (name.isEmpty()) {
            return false;
        }
        for (String n : names) {
            if (n.equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** Read once with the view: a boot id cannot change while this process lives. */
    @Override
    public Optional<String> bootId() {
        return view().bootId();
    }

    @Override
    public Optional<String> hostName() {
        return readSmallFile(procRoot + "/sys/kernel/hostname");
    }

    /**
     * {@code /etc/machine-id}, else {@code /var/lib/dbus/machine-id} ({@link ProcMount#parseMachineId}),
     * read once with the view: one read serves every check and every identity recorded.
     */
    @Override
    public Optional<String> machineId() {
        return view().machineId();
    }

    /** Read once with the view: a process cannot leave its PID namespace. */
    @Override
    public Optional<String> pidNamespace() {
        return view().pidNamespace();
    }

    /** The inode of the initial PID namespace (PROC_PID_INIT_INO, include/linux/proc_ns.h). */
    static final String INITIAL_PID_NAMESPACE = "4026531836";

    /** Whether {@code /proc/self/ns/pid} is the initial namespace's; unreadable counts as initial. */
    @Override
    public boolean inInitialPidNamespace() {
        return view().initialPidNamespace(); // decided once per view: every check asks
    }

    /** Linux can always look, through {@code /proc} (a distrusted one answers per process). */
    @Override
    public boolean supported() {
        return true;
    }

    /**
     * Now, less a tick, in the ticks since boot that start fingerprints count: {@code /proc/uptime}
     * (shifted as {@code stat} is inside a time namespace, so the same offset comes off).
     */
    @Override
    public Optional<String> startFloor() {
        ProcView v = view();
        if (v.distrust().isPresent()) {
            return Optional.empty();
        }
        Optional<String> uptime = readSmallFile(procRoot + "/uptime");
        if (uptime.isEmpty()) {
            return Optional.empty();
        }
        String seconds = uptime.get().split(" ")[0];
        int dot = seconds.indexOf('.');
        try {
            long ticks = dot < 0 ? Long.parseLong(seconds) * 100
                    : Long.parseLong(seconds.substring(0, dot)) * 100 + Long.parseLong((seconds.substring(dot + 1) + "00").substring(0, 2));
            return Optional.of(v.fingerprint(ticks - 1));
        } catch (RuntimeException e) { // NumberFormatException, not named: the verifier would load it with this class
            return Optional.empty();
        }
    }

    /** {@code /proc/PID/environ} of every process not started before {@code startedAfter} ({@link EnvironScan}). */
    @Override
    public EnvironmentScan scanEnvironments(String variable, Predicate<String> value, long uid,
                                            Optional<String> startedAfter) {
        ProcView v = view();
        if (v.distrust().isPresent()) {
            return EnvironmentScan.incomplete(v.distrust().get().detail());
        }
        return EnvironScan.scan(this, procRoot, hidesPids(), variable, value, uid, startedAfter);
    }

    /** {@code /proc/PID/environ} of one process ({@link EnvironScan}). */
    @Override
    public EnvironmentScan readEnvironment(long pid, String variable, Predicate<String> value) {
        ProcView v = view();
        if (v.distrust().isPresent()) {
            return EnvironmentScan.incomplete(v.distrust().get().detail());
        }
        return EnvironScan.one(this, procRoot, pid, variable, value);
    }

    /** The effective uid in {@code /proc/PID/status} ({@code Uid:}, its second field). */
    @Override
    public OptionalLong userId(long pid) {
        if (pid <= 0 || view().distrust().isPresent()) {
            return OptionalLong.empty();
        }
        ProcReader r = reader();
        if (r.read(r.path(procRoot, pid, "status"), true) != ProcReader.OK) {
            return OptionalLong.empty();
        }
        long uid = StatusFile.parse(r.buffer(), r.length()).uid();
        return uid < 0 ? OptionalLong.empty() : OptionalLong.of(uid);
    }

    /**
     * pidfds waited on with epoll ({@link PidfdEvents}), for the system's {@code /proc} only: a
     * tree of fixtures has no processes to pin.
     */
    @Override
    public Optional<ExitEvents> openExitEvents() {
        return this == SYSTEM ? PidfdEvents.open() : Optional.empty();
    }

    private Optional<String> readSmallFile(String path) {
        return ProcMount.readSmallFile(reader(), path);
    }

    /** The kernel keeps {@value #COMM_BYTES} bytes of a name: a longer one matches its truncation. */
    @Override
    public boolean nameMatches(String processName, String name) {
        return ProcessIntrospector.matchesTruncated(processName, name, COMM_BYTES);
    }

    @Override
    public String toString() {
        return "LinuxProcessIntrospector[" + procRoot + "]";
    }

    /**
     * What a failed read of a process's file means: gone, hidden by {@code hidepid}, denied, or
     * broken. A class of its own, loaded on the first failed read: a check of a live process — a
     * hook's cold JVM — neither loads nor verifies it (as {@code ProcReader}'s errno reader).
     */
    private static final class Missing {

        /** The inode of the initial user namespace (PROC_USER_INIT_INO, include/linux/proc_ns.h). */
        static final String INITIAL_USER_NS = "4026531837";

        /** A failed read of {@code path}, process {@code pid}'s file, told apart. */
        static ProcessLookup lookup(LinuxProcessIntrospector os, long pid, String path, int status, ProcReader r) {
            if (status == ProcReader.DENIED) {
                return new ProcessLookup.Unknown(Reason.ACCESS_DENIED, r.error());
            }
            if (status != ProcReader.ABSENT) {
                return new ProcessLookup.Unknown(Reason.IO_ERROR, r.error());
            }
            if (!os.hidesPids()) {
                return new ProcessLookup.Gone(path + " does not exist");
            }
            PidPresence.Presence presence = presence(os.presence, pid);
            if (presence == PidPresence.Presence.ABSENT) {
                return new ProcessLookup.Gone("kill(" + pid + ", 0) says no such process");
            }
            if (presence == PidPresence.Presence.PRESENT) {
                return new ProcessLookup.Unknown(Reason.ACCESS_DENIED,
                        "pid " + pid + " exists but " + os.procRoot + " hides it (hidepid)");
            }
            return new ProcessLookup.Unknown(Reason.ACCESS_DENIED,
                    os.procRoot + " hides pids (hidepid) and kill(2) could not be called to look past it");
        }

        /**
         * Asks kill(2), or the test's stand-in (null for kill). Without JNA on the class path even
         * loading {@code Kill} fails (its signature names JNA types): that is "cannot ask", not an error.
         */
        private static PidPresence.Presence presence(PidPresence standIn, long pid) {
            if (standIn != null) {
                return standIn.probe(pid);
            }
            try {
                return Kill.INSTANCE.probe(pid);
            } catch (LinkageError e) {
                return PidPresence.Presence.UNAVAILABLE;
            }
        }

        /**
         * Whether a missing {@code /proc/PID} may be a live process hidden from us: the procfs at
         * {@code procRoot} hides pids ({@code hidepid=}, {@code subset=pid}) and we cannot see past
         * that. Asked only when an entry is missing, so a check of a live process never reads
         * mountinfo; it reads what it needs itself and cannot change while the process lives.
         */
        static boolean hidesPids(String procRoot, ProcReader r) {
            // Unreadable mountinfo: assume hiding, so that a missing entry is double-checked.
            if (r.read(procRoot + "/self/mountinfo", true) == ProcReader.OK
                    && !MountInfo.hidesPids(r.text(), procRoot)) {
                return false;
            }
            if (r.read(procRoot + "/self/status", true) != ProcReader.OK) {
                return true;
            }
            // CAP_SYS_PTRACE sees past hidepid only where it counts: a child user namespace shows every
            // capability in CapEff, but they do not reach a procfs mounted by an outer namespace.
            boolean seesAll = StatusFile.parse(r.buffer(), r.length()).canPtraceAny()
                    && INITIAL_USER_NS.equals(ProcMount.namespace(procRoot, "user").orElse(""));
            return !seesAll;
        }
    }
}
