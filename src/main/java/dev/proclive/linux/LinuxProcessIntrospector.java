package dev.proclive.linux;

import dev.proclive.Reason;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

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
 *       without CAP_SYS_PTRACE: then {@code kill(pid, 0)} decides (ESRCH gone, EPERM present),
 *       through JNA loaded at that moment and never before.</li>
 *   <li>A {@code /proc} mounted for another PID namespace (its {@code /proc/self/status} lists more
 *       than one {@code NSpid}, or {@code /proc/self} does not resolve) is trusted for nothing.</li>
 *   <li>Boot id from {@code /proc/sys/kernel/random/boot_id}, read once; host from
 *       {@code /proc/sys/kernel/hostname}; PID namespace from the inode in
 *       {@code /proc/self/ns/pid}, read once.</li>
 * </ul>
 *
 * <p>Thread-safe. Not API: reach it through {@link dev.proclive.ProcLive}.
 */
public final class LinuxProcessIntrospector implements ProcessIntrospector {

    private static final LinuxProcessIntrospector SYSTEM = new LinuxProcessIntrospector("/proc", null);

    /** TASK_COMM_LEN (16) less the terminating NUL: the kernel keeps this many bytes of a name. */
    static final int COMM_BYTES = 15;

    private final String procRoot;
    private final PidPresence presence;
    private final ThreadLocal<ProcReader> readers = new ThreadLocal<>();

    /** Whether /proc shows this process's PID namespace: decided once, see {@link #untrusted()}. */
    private volatile boolean trusted;
    private volatile ProcessLookup.Unknown distrust;
    private volatile StatusFile selfStatus;
    private volatile Boolean hidesPids;
    private volatile Optional<String> bootId;
    private volatile Optional<String> pidNamespace;

    /**
     * @param procRoot where procfs is mounted ({@code /proc}; a directory of fixtures in tests)
     * @param presence how to ask whether a pid exists when procfs hides it; null for kill(2)
     */
    LinuxProcessIntrospector(String procRoot, PidPresence presence) {
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
        ProcessLookup.Unknown untrusted = untrusted();
        if (untrusted != null) {
            return untrusted;
        }
        ProcReader r = reader();
        String path = procRoot + "/self/stat";
        int status = r.read(path, false);
        if (status != ProcReader.OK) {
            return new ProcessLookup.Unknown(
                    status == ProcReader.DENIED ? Reason.ACCESS_DENIED : Reason.IO_ERROR,
                    path + ": " + r.error());
        }
        String problem = r.line.locate(r.buffer(), r.length());
        return problem == null ? new ProcessLookup.Found(r.line.info()) : malformed(path, problem);
    }

    /**
     * The verdict path: what {@code lookup(pid).reasonFor(recordedStart)} gives, but comparing the
     * fingerprint in place instead of decoding the line.
     */
    @Override
    public Reason probe(long pid, String recordedStart) {
        if (pid <= 0) {
            return Reason.EXITED;
        }
        ProcessLookup.Unknown untrusted = untrusted();
        if (untrusted != null) {
            return untrusted.reason();
        }
        ProcReader r = reader();
        String path = r.path(procRoot, pid, "stat");
        int status = r.read(path, false);
        if (status != ProcReader.OK) {
            return failure(pid, path, status, r).reasonFor(recordedStart);
        }
        StatLine line = r.line;
        if (line.locate(r.buffer(), r.length()) != null || line.pid() != pid) {
            return Reason.IO_ERROR;
        }
        int start = line.compareStart(recordedStart);
        ProcessState state = StatLine.state(line.stateByte());
        if (state == ProcessState.ZOMBIE) {
            ProcessLookup failed = readStatus(pid, r, null); // overwrites the buffer; start is kept
            if (failed != null) {
                return failed.reasonFor(recordedStart);
            }
            state = r.threads > 1 ? ProcessState.LIVE : ProcessState.ZOMBIE;
        }
        if (recordedStart.isEmpty()) {
            return Reason.NO_FINGERPRINT;
        }
        if (start != StatLine.SAME) {
            return Reason.PID_REUSED;
        }
        // if, not switch: a switch on an enum loads a synthetic class on first use
        if (state == ProcessState.LIVE) {
            return Reason.MATCHED;
        }
        return state == ProcessState.ZOMBIE ? Reason.ZOMBIE : Reason.EXITED;
    }

    private ProcessLookup read(long pid, boolean processOnly) {
        if (pid <= 0) {
            return new ProcessLookup.Gone("no process has pid " + pid);
        }
        ProcessLookup.Unknown untrusted = untrusted();
        if (untrusted != null) {
            return untrusted;
        }
        ProcReader r = reader();
        String path = r.path(procRoot, pid, "stat");
        int status = r.read(path, false);
        if (status != ProcReader.OK) {
            return failure(pid, path, status, r);
        }
        String problem = r.line.locate(r.buffer(), r.length());
        if (problem != null) {
            return malformed(path, problem);
        }
        ProcessInfo info = r.line.info();
        if (info.pid() != pid) {
            return malformed(path, "it names pid " + info.pid());
        }
        if (processOnly || info.state() == ProcessState.ZOMBIE) {
            ProcessLookup failed = readStatus(pid, r, processOnly ? info : null);
            if (failed != null) {
                return failed;
            }
            if (info.state() == ProcessState.ZOMBIE && r.threads > 1) {
                info = new ProcessInfo(info.pid(), info.parentPid(), info.name(), info.start(),
                        ProcessState.LIVE);
            }
        }
        return new ProcessLookup.Found(info);
    }

    /**
     * Reads {@code /proc/PID/status}, leaving its {@code Threads:} in {@code r.threads}; returns
     * the lookup to answer instead when that fails, or when {@code processOnly} is given and
     * {@code pid} is a thread id. {@code /proc/TID/stat} opens for any thread though the directory
     * lists only processes: {@code Tgid:} tells them apart. A {@code Z} main thread whose other
     * threads still run is a live process: {@code Threads:} counts them.
     */
    private ProcessLookup readStatus(long pid, ProcReader r, ProcessInfo processOnly) {
        String path = r.path(procRoot, pid, "status");
        int status = r.read(path, true);
        if (status != ProcReader.OK) {
            return failure(pid, path, status, r);
        }
        StatusFile s = StatusFile.parse(r.buffer(), r.length());
        r.threads = s.threads();
        if (processOnly != null && s.tgid() != pid) {
            return new ProcessLookup.Gone(pid + " is a thread of process " + s.tgid() + ", not a process");
        }
        return null;
    }

    /** A failed read of a process's file, told apart: gone, hidden, denied, or broken. */
    private ProcessLookup failure(long pid, String path, int status, ProcReader r) {
        if (status == ProcReader.DENIED) {
            return new ProcessLookup.Unknown(Reason.ACCESS_DENIED, r.error());
        }
        if (status != ProcReader.ABSENT) {
            return new ProcessLookup.Unknown(Reason.IO_ERROR, r.error());
        }
        if (!hidesPids()) {
            return new ProcessLookup.Gone(path + " does not exist");
        }
        PidPresence.Presence presence = presence(pid);
        if (presence == PidPresence.Presence.ABSENT) {
            return new ProcessLookup.Gone("kill(" + pid + ", 0) says no such process");
        }
        if (presence == PidPresence.Presence.PRESENT) {
            return new ProcessLookup.Unknown(Reason.ACCESS_DENIED,
                    "pid " + pid + " exists but " + procRoot + " hides it (hidepid)");
        }
        return new ProcessLookup.Unknown(Reason.ACCESS_DENIED,
                procRoot + " hides pids (hidepid) and kill(2) could not be called to look past it");
    }

    private static ProcessLookup.Unknown malformed(String path, String problem) {
        return new ProcessLookup.Unknown(Reason.IO_ERROR, "malformed " + path + ": " + problem);
    }

    /**
     * Asks kill(2), or the test's stand-in. Without JNA on the class path even loading
     * {@code Kill} fails (its signature names JNA types): that is "cannot ask", not an error.
     */
    private PidPresence.Presence presence(long pid) {
        if (presence != null) {
            return presence.probe(pid);
        }
        try {
            return Kill.INSTANCE.probe(pid);
        } catch (LinkageError e) {
            return PidPresence.Presence.UNAVAILABLE;
        }
    }

    /** This thread's reader; a plain ThreadLocal, so no subclass is loaded for it. */
    private ProcReader reader() {
        ProcReader r = readers.get();
        if (r == null) {
            r = new ProcReader();
            readers.set(r);
        }
        return r;
    }

    /**
     * Null when {@code /proc} shows this process's own PID namespace; else why not. Decided once
     * (a failed read is asked again next time).
     */
    private ProcessLookup.Unknown untrusted() {
        if (trusted) {
            return null;
        }
        ProcessLookup.Unknown d = distrust;
        return d != null ? d : readTrust();
    }

    private ProcessLookup.Unknown readTrust() {
        ProcReader r = reader();
        String path = procRoot + "/self/status";
        int status = r.read(path, true);
        if (status == ProcReader.ABSENT) {
            return distrust = new ProcessLookup.Unknown(Reason.OTHER_PID_NAMESPACE, procRoot
                    + "/self does not resolve: " + procRoot
                    + " belongs to another PID namespace or is not procfs");
        }
        if (status != ProcReader.OK) {
            return new ProcessLookup.Unknown(Reason.IO_ERROR, path + ": " + r.error());
        }
        StatusFile self = StatusFile.parse(r.buffer(), r.length());
        selfStatus = self;
        if (self.nspidCount() > 1) {
            return distrust = new ProcessLookup.Unknown(Reason.OTHER_PID_NAMESPACE, procRoot
                    + " was mounted for another PID namespace: its pids are not this process's ("
                    + "NSpid lists " + self.nspidCount() + " ids)");
        }
        trusted = true;
        return null;
    }

    /** Whether a missing {@code /proc/PID} may be a live process hidden from us. Decided once. */
    boolean hidesPids() {
        Boolean h = hidesPids;
        if (h == null) {
            ProcReader r = reader();
            int status = r.read(procRoot + "/self/mountinfo", true);
            StatusFile self = selfStatus;
            // Unreadable mountinfo: assume hiding, so that a missing entry is double-checked.
            h = status != ProcReader.OK
                    || MountInfo.hidesPids(r.text(), procRoot) && (self == null || !self.canPtraceAny());
            hidesPids = h;
        }
        return h;
    }

    @Override
    public Optional<String> bootId() {
        Optional<String> b = bootId;
        if (b == null) {
            b = readSmallFile(procRoot + "/sys/kernel/random/boot_id");
            if (b.isPresent()) {
                bootId = b; // a boot id cannot change while this process lives
            }
        }
        return b;
    }

    @Override
    public Optional<String> hostName() {
        return readSmallFile(procRoot + "/sys/kernel/hostname");
    }

    @Override
    public Optional<String> pidNamespace() {
        Optional<String> ns = pidNamespace;
        if (ns == null) {
            ns = readPidNamespace();
            if (ns.isPresent()) {
                pidNamespace = ns; // a process cannot leave its PID namespace
            }
        }
        return ns;
    }

    /** {@code /proc/self/ns/pid} is a link to {@code pid:[4026531836]}: the inode names the namespace. */
    private Optional<String> readPidNamespace() {
        try {
            String link = Files.readSymbolicLink(Path.of(procRoot, "self", "ns", "pid")).toString();
            int open = link.indexOf('[');
            int close = link.lastIndexOf(']');
            if (link.startsWith("pid:") && open > 0 && close > open + 1) {
                return Optional.of(link.substring(open + 1, close));
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    private Optional<String> readSmallFile(String path) {
        ProcReader r = reader();
        if (r.read(path, true) != ProcReader.OK) {
            return Optional.empty();
        }
        String text = r.text().trim();
        return text.isEmpty() ? Optional.empty() : Optional.of(text);
    }

    @Override
    public int nameLimitBytes() {
        return COMM_BYTES;
    }

    @Override
    public String toString() {
        return "LinuxProcessIntrospector[" + procRoot + "]";
    }

}
