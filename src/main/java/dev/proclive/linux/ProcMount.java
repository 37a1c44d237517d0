package dev.proclive.linux;

import dev.proclive.Identity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * One mounted {@code /proc} (a tree of fixtures in tests): the facts an identity records that are
 * this host's for the life of the process (boot id, PID namespace, machine id), read once; its
 * view ({@link ProcView}), kept once it is settled, and each thread's reader, which
 * {@link LinuxProcessIntrospector} reads through; and the two calls a hook makes in a fresh JVM,
 * its owner and a check of it, taken here when the case is plain, with no class but
 * {@link ProcReader} (the design's "hook path in a cold JVM": each class a cold JVM loads from a
 * jar costs about a third of a millisecond, so the plain path reads the facts here rather than
 * through {@link ProcView}).
 *
 * <p>Plain: {@code /proc} is this process's and shows start times unshifted, every file read opens
 * and holds a well-formed line of a live process, the facts an identity records are those read
 * here. Anything else (another PID namespace's {@code /proc}, a time namespace, an ancestor that
 * cannot be read or has exited, an identity that is not proven alive, no owner found) is answered
 * "not here" (null, false), and the caller asks the general walk and checker, which decide every
 * case from the same files. So what this class answers is what they would answer; it only answers
 * less often. Thread-safe.
 */
public final class ProcMount {

    private static final ProcMount SYSTEM = new ProcMount("/proc", "", null);

    /** Where the machine id is looked for, first to last, below the filesystem root (machine-id(5)). */
    static final String[] MACHINE_ID_PATHS = {"/etc/machine-id", "/var/lib/dbus/machine-id"};

    /* Whether this /proc is plain (plainly()): ints, not an enum, on the hook path. */
    /** Not known yet: not read, or a read that may pass failed. */
    private static final int UNREAD = 0;
    private static final int PLAIN = 1;
    private static final int NOT_PLAIN = 2;

    /** How long a read of this host's name is reused, as {@code LivenessChecker} reuses its own. */
    private static final long HOST_TTL_NANOS = 1_000_000_000L;

    private final String root;
    private final String machineRoot;
    private final Consumer<String> opened;
    /** A plain ThreadLocal, so no subclass is loaded for it. */
    private final ThreadLocal<ProcReader> readers = new ThreadLocal<>();

    /** What this {@code /proc} looks like; null until read (a read that may pass is not kept). */
    private volatile ProcView view;

    /** Whether {@link #bootId}, {@link #pidNamespace} and {@link #machineId} were read: written after them. */
    private volatile boolean factsRead;
    /** Held while they are read (a private lock: {@link #system()} is anyone's to synchronize on). */
    private final Object factsLock = new Object();
    /** {@code /proc/sys/kernel/random/boot_id}, {@code ""} when unreadable (see {@link ProcView#bootId}). */
    private String bootId;
    /** The inode {@code /proc/self/ns/pid} names, {@code ""} when unreadable. */
    private String pidNamespace;
    /** The first of {@link #MACHINE_ID_PATHS} that holds a valid id ({@link #parseMachineId}), or {@code ""}. */
    private String machineId;

    /** {@link #UNREAD}, {@link #PLAIN} or {@link #NOT_PLAIN}: see {@link #plainly()}. */
    private volatile int plain;

    /** The last host name read, or null (not read yet, or unreadable), and when: as in {@code LivenessChecker}. */
    private volatile String hostName;
    private volatile long hostReadAt;

    /**
     * @param root        where procfs is mounted
     * @param machineRoot what {@code /etc/machine-id} is found below ({@code ""} for this system)
     * @param opened      told every path opened or link read; null but in tests that count them
     */
    ProcMount(String root, String machineRoot, Consumer<String> opened) {
        this.root = root;
        this.machineRoot = machineRoot;
        this.opened = opened;
    }

    /** This machine's {@code /proc}. */
    public static ProcMount system() {
        return SYSTEM;
    }

    /** This thread's reader. */
    ProcReader reader() {
        ProcReader r = readers.get();
        if (r == null) {
            r = new ProcReader(opened);
            readers.set(r);
        }
        return r;
    }

    /** What this {@code /proc} looks like, read on first use and kept once it is settled. */
    ProcView view() {
        ProcView v = view;
        if (v == null) {
            readFacts();
            v = ProcView.read(root, reader(), optional(bootId), optional(pidNamespace), optional(machineId));
            if (v.settled() && factsRead) {
                view = v;
            }
        }
        return v;
    }

    /**
     * Reads the boot id, PID namespace and machine id, once: none of them changes while the process
     * lives. A read that failed in a way that may pass (not absent, not denied: EMFILE, EIO) leaves
     * its fact empty for now and is made again next time.
     */
    private void readFacts() {
        if (!factsRead) {
            synchronized (factsLock) {
                if (!factsRead) {
                    ProcReader r = reader();
                    int boot = r.read(root + "/sys/kernel/random/boot_id", true);
                    bootId = boot == ProcReader.OK ? r.text().trim() : "";
                    pidNamespace = namespace(root, "pid").orElse("");
                    boolean settled = boot != ProcReader.FAILED;
                    String machine = "";
                    for (String path : MACHINE_ID_PATHS) {
                        int read = r.read(machineRoot + path, true);
                        settled &= read != ProcReader.FAILED;
                        Optional<String> id = read == ProcReader.OK ? parseMachineId(r.text()) : Optional.empty();
                        if (id.isPresent()) {
                            machine = id.get();
                            break;
                        }
                    }
                    machineId = machine;
                    factsRead = settled;
                }
            }
        }
    }

    private static Optional<String> optional(String fact) {
        return fact.isEmpty() ? Optional.empty() : Optional.of(fact);
    }

    /**
     * Whether this {@code /proc} is plain: this process's (its {@code self} resolves and its
     * {@code NSpid} lists one id) and its start times unshifted (no {@code timens_offsets}, or a
     * boottime offset of zero), the facts read. What {@link ProcView#read} finds trusted and
     * unshifted, read with fewer classes: anything it would have to look at more closely (a read
     * that failed, offsets in another spelling) is not plain, and the general path decides.
     * Kept once known; a read that may pass is tried again next time.
     */
    private boolean plainly() {
        readFacts();
        int p = plain;
        if (p == UNREAD) {
            ProcReader r = reader();
            int status = r.read(root + "/self/status", true);
            if (status == ProcReader.OK) {
                p = ProcReader.wordsAfter(r.buffer(), r.length(), StatusFile.NSPID) > 1 ? NOT_PLAIN : offsets(r);
            } else {
                p = status == ProcReader.ABSENT ? NOT_PLAIN : UNREAD;
            }
            plain = p;
        }
        return p == PLAIN;
    }

    /** Whether start times are shown unshifted here: {@link #PLAIN}, {@link #NOT_PLAIN} or {@link #UNREAD}. */
    private int offsets(ProcReader r) {
        int offsets = r.read(root + "/self/timens_offsets", true);
        if (offsets == ProcReader.ABSENT) {
            return PLAIN; // a kernel without time namespaces (before 5.6)
        }
        if (offsets != ProcReader.OK) {
            return UNREAD;
        }
        return zeroBoottime(r.text()) ? PLAIN : NOT_PLAIN;
    }

    /**
     * Whether pid 1 is init of the initial PID namespace, the namespace being {@code pidNamespace}
     * ({@code ""}: unread, counted as initial).
     */
    static boolean initialPidNamespace(String pidNamespace) {
        return pidNamespace.isEmpty() || LinuxProcessIntrospector.INITIAL_PID_NAMESPACE.equals(pidNamespace);
    }

    /** This host's name, read at most about once a second; null when it cannot be read. */
    private String hostName() {
        String h = hostName;
        long now = System.nanoTime();
        if (h == null || now - hostReadAt > HOST_TTL_NANOS) {
            h = readSmallFile(reader(), root + "/sys/kernel/hostname").orElse(null);
            hostReadAt = now;
            hostName = h;
        }
        return h;
    }

    /**
     * The owner of the calling process by the owner walk's rules ({@code AncestorWalk.owner}): its
     * first ancestor, at most {@code maxDepth} up, none of whose names (comm, executable, argv[0])
     * is one of {@code skip}; not init of the initial PID namespace; not a skipped pid 1. Empty when
     * the walk plainly ends without one (at the top of the tree, at init, at a skipped pid 1, at the
     * depth limit), as the general walk ends there too; null when the walk is not plain (an
     * ancestor not plainly read, no host name): the general walk then decides, and says why.
     *
     * @param skip the names that are never an owner, separated by single spaces, each ASCII and at
     *             most {@value LinuxProcessIntrospector#COMM_BYTES} bytes long, so that a comm
     *             names one only when it is equal to it (no truncated name to allow for)
     */
    public Optional<Identity> owner(String skip, int maxDepth) {
        if (!plainly()) {
            return null;
        }
        ProcReader r = reader();
        if (!readLive(r, root + "/self/stat", 0)) {
            return null;
        }
        long pid = r.parentPid();
        for (int depth = 0; depth < maxDepth; depth++) {
            if (pid <= 0 || pid == 1 && initialPidNamespace(pidNamespace)) {
                return Optional.empty(); // the top of the tree or init: never an owner
            }
            if (!readLive(r, r.path(root, pid, "stat"), pid)) {
                return null; // an ancestor not plainly read, or ended: the general walk says which
            }
            // all of the line that is needed, before the name reads take the buffer
            long parent = r.parentPid();
            String comm = r.comm();
            String start = r.startText();
            if (named(comm, skip) || named(r.executableName(root, pid), skip) || named(r.argv0Name(root, pid), skip)) {
                if (pid == 1) {
                    return Optional.empty(); // a container's init or shell: never an owner
                }
                pid = parent;
                continue;
            }
            String host = hostName();
            if (host == null) {
                return null;
            }
            return Optional.of(new Identity(pid, start, bootId, host, comm, pidNamespace, machineId));
        }
        return Optional.empty(); // the depth limit
    }

    /**
     * Whether {@code id} is proven ALIVE the plain way: each fact it records (host, machine, PID
     * namespace, boot) is this one's, its start is spelled as this platform writes one, and the
     * process that has its pid is live and started then. False otherwise, which is no verdict: the
     * general check decides.
     */
    public boolean alive(Identity id) {
        long pid = id.pid();
        if (pid <= 0 || !plainly()) {
            return false;
        }
        if (!id.host().isEmpty() && !id.host().equals(hostName())) {
            return false;
        }
        if (!recorded(id.machine(), machineId) || !recorded(id.pidns(), pidNamespace) || !recorded(id.boot(), bootId)) {
            return false;
        }
        String start = id.start();
        if (start.isEmpty() || start.length() > 1 && start.charAt(0) == '0') {
            return false; // not a fingerprint as the kernel writes one (a number with a leading zero)
        }
        ProcReader r = reader();
        return readLive(r, r.path(root, pid, "stat"), pid) && r.startIs(start);
    }

    /** Whether {@code recorded} is empty (not recorded) or is what was read here ({@code ""}: nothing read). */
    private static boolean recorded(String recorded, String here) {
        return recorded.isEmpty() || !here.isEmpty() && here.equals(recorded);
    }

    /**
     * Reads the stat line at {@code path} and locates its fields: true when it is a well-formed line
     * of a live process, {@code pid}'s (any pid when 0). A failed read is not told apart: the
     * general path reads it again for that.
     */
    private static boolean readLive(ProcReader r, String path, long pid) {
        return r.tryRead(path, false) && r.locate(r.buffer(), r.length()) == null
                && (pid == 0 || r.pid() == pid) && r.live();
    }

    /** Whether {@code name} is one of the space-separated {@code words}. */
    static boolean named(String name, String words) {
        int n = name.length();
        if (n == 0 || name.indexOf(' ') >= 0) {
            return false;
        }
        for (int at = words.indexOf(name); at >= 0; at = words.indexOf(name, at + 1)) {
            if ((at == 0 || words.charAt(at - 1) == ' ') && (at + n == words.length() || words.charAt(at + n) == ' ')) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code /proc/self/timens_offsets} has a {@code boottime} line whose numbers are all 0,
     * as every process outside a time namespace reads: then there is nothing to take off, and
     * {@link BootOffset} is not needed to say so. Anything else is left to {@link BootOffset#parse}.
     */
    static boolean zeroBoottime(String offsets) {
        int at = offsets.startsWith("boottime ") ? 0 : offsets.indexOf("\nboottime ") + 1;
        if (at <= 0 && !offsets.startsWith("boottime ")) {
            return false;
        }
        int zeros = 0;
        for (int i = at + "boottime ".length(); i < offsets.length() && offsets.charAt(i) != '\n'; i++) {
            char c = offsets.charAt(i);
            if (c == '0') {
                if (i == 0 || offsets.charAt(i - 1) == ' ' || offsets.charAt(i - 1) == '\t') {
                    zeros++;
                }
            } else if (c != ' ' && c != '\t') {
                return false;
            }
        }
        return zeros == 2;
    }

    /**
     * The machine id a file's text holds, or empty when it is none: systemd's machine-id(5) is one
     * line of 32 lowercase hex digits. Anything else (empty, {@code uninitialized} as written during
     * first boot, all zeros, another length, upper case, spaces) is no id, and nothing is recorded
     * rather than a value other machines may share by chance.
     */
    static Optional<String> parseMachineId(String text) {
        String id = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        if (id.length() != 32) {
            return Optional.empty();
        }
        boolean zeros = true;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return Optional.empty();
            }
            zeros &= c == '0';
        }
        return zeros ? Optional.empty() : Optional.of(id);
    }

    /** A small file's text, trimmed; empty when it cannot be read or holds nothing. */
    static Optional<String> readSmallFile(ProcReader r, String path) {
        if (r.read(path, true) != ProcReader.OK) {
            return Optional.empty();
        }
        String text = r.text().trim();
        return text.isEmpty() ? Optional.empty() : Optional.of(text);
    }

    /** The inode {@code /proc/self/ns/KIND} links to ({@code pid:[4026531836]}), or empty. */
    static Optional<String> namespace(String procRoot, String kind) {
        try {
            String link = Files.readSymbolicLink(Path.of(procRoot, "self", "ns", kind)).toString();
            int open = link.indexOf('[');
            int close = link.lastIndexOf(']');
            if (link.startsWith(kind + ":") && open > 0 && close > open + 1) {
                return Optional.of(link.substring(open + 1, close));
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }
}
