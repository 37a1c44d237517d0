package dev.proclive.linux;

import dev.proclive.Identity;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * One mounted {@code /proc} (a tree of fixtures in tests): its view ({@link ProcView}), kept once
 * it is settled, and each thread's reader, which {@link LinuxProcessIntrospector} reads through;
 * and the two calls a hook makes in a fresh JVM, its owner and a check of it, taken here when the
 * case is plain, with no class but {@link ProcReader} and {@link ProcView} (the design's "hook
 * path in a cold JVM": each class a cold JVM loads costs a fraction of a millisecond).
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

    /** How long a read of this host's name is reused, as {@code LivenessChecker} reuses its own. */
    private static final long HOST_TTL_NANOS = 1_000_000_000L;

    private final String root;
    private final String machineRoot;
    private final Consumer<String> opened;
    /** A plain ThreadLocal, so no subclass is loaded for it. */
    private final ThreadLocal<ProcReader> readers = new ThreadLocal<>();

    /** What this {@code /proc} looks like; null until read (a read that may pass is not kept). */
    private volatile ProcView view;

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
            v = ProcView.read(root, machineRoot, reader());
            if (v.settled()) {
                view = v;
            }
        }
        return v;
    }

    /** The view, when it is plain: trusted, its start times not shifted; else null. */
    private ProcView plainView() {
        ProcView v = view();
        return v.distrust().isPresent() || v.shifted() ? null : v;
    }

    /** This host's name, read at most about once a second; null when it cannot be read. */
    private String hostName() {
        String h = hostName;
        long now = System.nanoTime();
        if (h == null || now - hostReadAt > HOST_TTL_NANOS) {
            h = ProcView.readSmallFile(reader(), root + "/sys/kernel/hostname").orElse(null);
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
        ProcView v = plainView();
        if (v == null) {
            return null;
        }
        ProcReader r = reader();
        if (!readLive(r, root + "/self/stat", 0)) {
            return null;
        }
        long pid = r.parentPid();
        for (int depth = 0; depth < maxDepth; depth++) {
            if (pid <= 0 || pid == 1 && v.initialPidNamespace()) {
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
            return Optional.of(new Identity(pid, start, v.bootId().orElse(""), host, comm,
                    v.pidNamespace().orElse(""), v.machineId().orElse("")));
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
        ProcView v = pid <= 0 ? null : plainView();
        if (v == null) {
            return false;
        }
        if (!id.host().isEmpty() && !id.host().equals(hostName())) {
            return false;
        }
        if (!recorded(id.machine(), v.machineId()) || !recorded(id.pidns(), v.pidNamespace())
                || !recorded(id.boot(), v.bootId())) {
            return false;
        }
        String start = id.start();
        if (start.isEmpty() || start.length() > 1 && start.charAt(0) == '0') {
            return false; // not a fingerprint as the kernel writes one (a number with a leading zero)
        }
        ProcReader r = reader();
        return readLive(r, r.path(root, pid, "stat"), pid) && r.startIs(start);
    }

    /** Whether {@code recorded} is empty (not recorded) or is what was read here. */
    private static boolean recorded(String recorded, Optional<String> here) {
        return recorded.isEmpty() || here.isPresent() && here.get().equals(recorded);
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
}
