package dev.proclive.linux;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.spi.ProcessState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Linux's answers ({@link Descendants}): {@code prctl(PR_SET_CHILD_SUBREAPER)}; orphans from
 * {@code /proc/self/task/PID/children} (the children of the main thread, to which the kernel
 * re-parents what a subreaper adopts; the JDK starts its own children from other threads, so they
 * are not listed there), zombies among them reaped with {@code waitpid(pid, WNOHANG)}; cgroups in
 * the v2 hierarchy under this process's own ({@code /proc/self/cgroup}'s {@code 0::} line, under
 * the {@code cgroup2} mount in {@code /proc/self/mountinfo}). JNA loads on the first call that
 * needs it (prctl, waitpid); the cgroup's files are plain I/O.
 */
public final class LinuxDescendants implements Descendants {

    /** The one instance: being a subreaper is a fact about the process. */
    public static final LinuxDescendants INSTANCE = new LinuxDescendants();

    private static final int PR_SET_CHILD_SUBREAPER = 36;
    private static final int WNOHANG = 1;
    private static final long REAP_MILLIS = 100;
    /** How often {@link #orphans} reads the children again while some of them end under it. */
    private static final int MAX_READS = 50;
    private static final SecureRandom RANDOM = new SecureRandom();
    /** How the cgroups this library makes are named: {@code proclive.LEASE.STORE.HEX}. */
    private static final String PREFIX = "proclive.";

    private volatile boolean subreaper;

    private LinuxDescendants() {
    }

    @Override
    public synchronized boolean becomeSubreaper() {
        if (!subreaper) {
            try {
                Holder.LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
                subreaper = true;
                startReaper();
            } catch (LinkageError | RuntimeException e) {
                // an old kernel, a seccomp filter, no JNA: nothing is tracked this way
            }
        }
        return subreaper;
    }

    /**
     * A subreaper reaps what it adopts: orphans of anything this JVM started (not only of a tracked
     * command) end up its children, and each stays a zombie until the next look — a daemon that
     * re-forks leaves one per hop, and a subreaper that reaps late fills the pid space. One daemon
     * thread looks every {@value #REAP_MILLIS} ms (a read of one small file when nothing was adopted).
     */
    private static void startReaper() {
        Thread reaper = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(REAP_MILLIS);
                } catch (InterruptedException e) {
                    return;
                }
                INSTANCE.orphans(Optional.empty());
            }
        }, "proclive-subreaper");
        reaper.setDaemon(true);
        reaper.start();
    }

    @Override
    public Optional<List<Long>> orphans(Optional<String> startedAfter) {
        if (!subreaper) {
            return Optional.empty();
        }
        long floor = startedAfter.flatMap(f -> {
            java.util.OptionalLong t = EnvironScan.ticks(f);
            return t.isPresent() ? Optional.of(t.getAsLong()) : Optional.empty();
        }).orElse(Long.MIN_VALUE);
        Path children = Path.of("/proc/self/task", Long.toString(ProcessHandle.current().pid()), "children");
        // A child that ended after the list was read handed its own children to this process then,
        // after the read: the list is read again until a read finds every child it lists alive.
        for (int read = 0; read < MAX_READS; read++) {
            String listed;
            try {
                listed = Files.readString(children, StandardCharsets.US_ASCII);
            } catch (IOException | RuntimeException e) {
                return Optional.empty(); // no CONFIG_PROC_CHILDREN, or the main thread is gone
            }
            List<long[]> live = new ArrayList<>();
            boolean ended = false;
            for (String word : listed.trim().split("\\s+")) {
                if (word.isEmpty()) {
                    continue;
                }
                long pid = Long.parseLong(word);
                Optional<StatLine> stat = EnvironScan.located(Path.of("/proc", Long.toString(pid), "stat"));
                if (stat.isEmpty() || !live(pid, stat.get())) {
                    stat.ifPresent(gone -> reap(pid));
                    ended = true;
                    continue;
                }
                if (stat.get().startTicks() >= floor) {
                    live.add(new long[] {pid, stat.get().startTicks()}); // older ones are another command's, or nobody's
                }
            }
            if (!ended) {
                live.sort(Comparator.<long[]>comparingLong(p -> p[1]).thenComparingLong(p -> p[0]));
                List<Long> pids = new ArrayList<>();
                live.forEach(p -> pids.add(p[0]));
                return Optional.of(pids);
            }
        }
        return Optional.empty(); // children kept ending under every read (a chain that re-forks): not told
    }

    /**
     * Whether the process whose {@code stat} line this is may still run, by the verdict rules: a
     * {@code Z} main thread whose other threads still run ({@code Threads:} above 1) is a live
     * process, whose end the kernel reports only once they all exited.
     */
    private static boolean live(long pid, StatLine stat) {
        ProcessState state = StatLine.state(stat.stateByte());
        if (state != ProcessState.ZOMBIE) {
            return state == ProcessState.LIVE;
        }
        try {
            byte[] status = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "status"));
            return StatusFile.parse(status, status.length).threads() > 1;
        } catch (IOException | RuntimeException e) {
            return false; // reaped since its stat was read
        }
    }

    private static void reap(long pid) {
        try {
            Holder.LIBC.waitpid((int) pid, Pointer.NULL, WNOHANG);
        } catch (LinkageError | RuntimeException e) {
            // not ours to reap after all, or reaped already
        }
    }

    /** This process's own cgroup directory in the v2 hierarchy, or empty. */
    private static Optional<Path> ownCgroup() {
        try {
            String mount = MountInfo.cgroup2(Files.readString(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8));
            if (mount == null) {
                return Optional.empty();
            }
            for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8)) {
                if (line.startsWith("0::/")) {
                    String own = line.substring("0::".length());
                    if (own.contains("/..") || own.contains(" (deleted)")) {
                        return Optional.empty();
                    }
                    return Optional.of(Path.of(mount + (own.equals("/") ? "" : own)));
                }
            }
        } catch (IOException | RuntimeException e) {
            // no procfs, or no such lines
        }
        return Optional.empty();
    }

    @Override
    public Optional<String> newCgroup(String lease, String store) {
        Optional<Path> own = ownCgroup();
        if (own.isEmpty() || !Files.isWritable(own.get().resolve("cgroup.procs"))) {
            return Optional.empty(); // a child moves from here into the new one: it must be able to write both
        }
        Path made = own.get().resolve(PREFIX + lease + "." + store + "." + HexFormat.of().formatHex(bits()));
        try {
            Files.createDirectory(made);
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // read-only, not delegated, or too deep
        }
        if (!Files.isWritable(made.resolve("cgroup.procs"))) {
            remove(made.toString());
            return Optional.empty();
        }
        return Optional.of(made.toString());
    }

    private static byte[] bits() {
        byte[] b = new byte[6];
        RANDOM.nextBytes(b);
        return b;
    }

    /** This process's cgroup namespace: the inode of {@code /proc/self/ns/cgroup}, as {@code cgroup:[N]} names it. */
    private static Optional<String> namespace() {
        try {
            String link = Files.readSymbolicLink(Path.of("/proc/self/ns/cgroup")).toString();
            if (link.startsWith("cgroup:[") && link.endsWith("]")) {
                return Optional.of(link.substring("cgroup:[".length(), link.length() - 1));
            }
        } catch (IOException | RuntimeException e) {
            // a kernel without cgroup namespaces (before 4.6), or no procfs
        }
        return Optional.empty();
    }

    private static Optional<String> inode(Path dir) throws IOException {
        Object ino = Files.readAttributes(dir, "unix:ino", LinkOption.NOFOLLOW_LINKS).get("ino");
        return ino == null ? Optional.empty() : Optional.of(ino.toString());
    }

    @Override
    public Optional<String> cgroupId(String cgroup) {
        try {
            Optional<String> ns = namespace();
            Optional<String> ino = inode(Path.of(cgroup));
            return ns.isPresent() && ino.isPresent() ? Optional.of(ns.get() + ":" + ino.get()) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public List<String> enter(String cgroup, List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("/bin/sh", "-c", ENTER, "proclive-cgroup",
                Path.of(cgroup, "cgroup.procs").toString()));
        wrapped.addAll(command);
        String program = command.isEmpty() ? "" : command.get(0);
        if (program.startsWith("-") && program.contains("/")) {
            // sh's exec reads a leading "-" as an option (dash refuses "-d/prog", and not every sh
            // takes "exec --"): the same file, named so that no shell reads it as one
            wrapped.set(5, "./" + program);
        }
        return wrapped;
    }

    /**
     * Moves the shell itself (writing 0 names the writer) into the cgroup whose {@code cgroup.procs}
     * is {@code $1}, then becomes the command: the same process, so what it forks starts inside.
     */
    private static final String ENTER = "echo 0 2>/dev/null >\"$1\" || { echo \"proclive: cannot move into cgroup"
            + " ${1%/cgroup.procs}; nothing was started\" >&2; exit " + CANNOT_ENTER + "; }; shift; exec \"$@\"";

    @Override
    public Optional<List<Long>> members(String cgroup, String id) {
        Path dir = Path.of(cgroup);
        if (!dir.getFileName().toString().startsWith(PREFIX)) {
            return Optional.empty(); // not one this library made: nothing it says is a proof here
        }
        int colon = id.indexOf(':');
        if (colon < 0) {
            return readMembers(dir).filter(pids -> !pids.isEmpty()); // made where it cannot be told: only who is inside counts
        }
        if (!namespace().equals(Optional.of(id.substring(0, colon)))) {
            return Optional.empty(); // seen from another cgroup namespace, the path is another cgroup's, or none
        }
        try {
            if (!inode(dir).equals(Optional.of(id.substring(colon + 1)))) {
                return Optional.empty(); // another directory under its name
            }
        } catch (NoSuchFileException e) {
            return removed(dir);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return readMembers(dir);
    }

    /** How often {@link #readMembers} reads a subtree again while a process moves within it under the read. */
    private static final int MEMBER_READS = 5;

    /**
     * The pids in {@code dir}'s subtree: its {@code cgroup.procs} and that of every cgroup below it
     * (a process may make a child cgroup of its own and move there: it never left). An empty list
     * only when the kernel says the subtree is empty ({@code populated 0} in {@code cgroup.events},
     * which counts every cgroup below), or it was removed since it was found; a subtree the kernel
     * calls populated whose members could not be read (one moved between two of its cgroups as
     * they were read) is read again, and proves nothing if it never reads whole.
     */
    private static Optional<List<Long>> readMembers(Path dir) {
        for (int read = 0; read < MEMBER_READS; read++) {
            try {
                List<Long> pids = new ArrayList<>();
                collectMembers(dir, pids, 0);
                if (!pids.isEmpty()) {
                    return Optional.of(pids);
                }
                Optional<Boolean> populated = populated(dir);
                if (populated.isEmpty()) {
                    return Optional.empty();
                }
                if (!populated.get()) {
                    return Optional.of(pids);
                }
            } catch (NoSuchFileException e) {
                if (!Files.exists(dir)) {
                    return removed(dir);
                }
                // a cgroup below was removed as it was read: read again
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** How deep below a command's cgroup its processes' own cgroups are read (the kernel's own limit is about as deep). */
    private static final int MAX_DEPTH = 64;

    /** Adds the pids of {@code dir}'s {@code cgroup.procs} and those of every cgroup below it to {@code pids}. */
    private static void collectMembers(Path dir, List<Long> pids, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("cgroups nested deeper than " + MAX_DEPTH + " below " + dir);
        }
        for (String line : Files.readAllLines(dir.resolve("cgroup.procs"), StandardCharsets.US_ASCII)) {
            if (!line.isBlank()) {
                pids.add(Long.parseLong(line.trim()));
            }
        }
        for (Path child : children(dir)) {
            collectMembers(child, pids, depth + 1);
        }
    }

    /** The cgroups directly below {@code dir}: its subdirectories (cgroupfs holds no links). */
    private static List<Path> children(Path dir) throws IOException {
        List<Path> children = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
                    children.add(entry);
                }
            }
        }
        return children;
    }

    /** Whether the kernel says a process is in {@code dir} or any cgroup below it; empty when it cannot be read. */
    private static Optional<Boolean> populated(Path dir) throws IOException {
        for (String line : Files.readAllLines(dir.resolve("cgroup.events"), StandardCharsets.US_ASCII)) {
            if (line.equals("populated 0")) {
                return Optional.of(false);
            }
            if (line.equals("populated 1")) {
                return Optional.of(true);
            }
        }
        return Optional.empty();
    }

    /**
     * A cgroup missing at its path, in the namespace it was made in: removed, which the kernel
     * allows only once it is empty; if its parent is a cgroup this process sees, nothing is in it
     * and nothing can enter it again.
     */
    private static Optional<List<Long>> removed(Path dir) {
        // a cgroup goes with its parents (systemd removes a stopped unit's whole subtree): the nearest
        // one still there, a cgroup, proves it gone; something else there (no cgroup2 file system) proves nothing
        for (Path p = dir.getParent(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                return Files.isRegularFile(p.resolve("cgroup.procs")) && !Files.exists(dir, LinkOption.NOFOLLOW_LINKS)
                        ? Optional.of(List.of()) : Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** SIGKILL, which {@code cgroup.kill} sends. */
    private static final int SIGKILL = 9;

    @Override
    public void signal(String cgroup, String id, int signal) {
        Optional<List<Long>> pids = members(cgroup, id); // proves the cgroup is the one made, before anything is sent
        if (pids.isEmpty()) {
            return;
        }
        if (signal == SIGKILL && killAll(Path.of(cgroup))) {
            return;
        }
        // read at once and signalled at once: a pid that ended in between and was used again within
        // that moment is the race every reader of cgroup.procs has (a service manager's too)
        pids.get().forEach(pid -> dev.proclive.posix.Signals.send(pid, signal));
    }

    /**
     * Kills every process of {@code dir}'s subtree through its {@code cgroup.kill} (Linux 5.14+):
     * the kernel's own walk, which also kills what is forked meanwhile; whether it was written.
     */
    private static boolean killAll(Path dir) {
        Path kill = dir.resolve("cgroup.kill");
        if (!Files.isRegularFile(kill)) {
            return false;
        }
        try {
            Files.writeString(kill, "1", StandardCharsets.US_ASCII);
            return true;
        } catch (IOException | RuntimeException e) {
            return false; // not writable here: each pid as read, below
        }
    }

    /**
     * Removes {@code cgroup} if its subtree is empty ({@code populated 0} in its
     * {@code cgroup.events}): the cgroups a process made below it first, deepest first (the kernel
     * removes only a cgroup with no process and no cgroup below it). A subtree still populated, or
     * whose state cannot be read, stays whole: a program inside that manages cgroups of its own
     * below keeps every one of them, the empty ones too.
     */
    @Override
    public void remove(String cgroup) {
        Path dir = Path.of(cgroup);
        if (dir.getFileName() == null || !dir.getFileName().toString().startsWith(PREFIX)) {
            return;
        }
        try {
            if (!populated(dir).equals(Optional.of(false))) {
                return;
            }
        } catch (IOException | RuntimeException e) {
            return; // removed already, or not a cgroup
        }
        removeTree(dir, 0);
    }

    /** Removes {@code dir} after every cgroup below it, deepest first; whether it is gone. */
    private static boolean removeTree(Path dir, int depth) {
        try {
            if (depth > MAX_DEPTH) {
                return false;
            }
            boolean emptied = true;
            for (Path child : children(dir)) {
                emptied &= removeTree(child, depth + 1);
            }
            if (emptied) {
                Files.deleteIfExists(dir);
            }
            return emptied;
        } catch (NoSuchFileException e) {
            return true; // someone else removed it
        } catch (DirectoryNotEmptyException e) {
            return false; // cgroupfs says EBUSY for a populated cgroup: it stays
        } catch (IOException | RuntimeException e) {
            return false; // not ours to remove, or it cannot be now
        }
    }

    @Override
    public List<String> emptyCgroups(String store, String madeNow, Duration olderThan) {
        Optional<Path> own = ownCgroup();
        if (own.isEmpty()) {
            return List.of();
        }
        long before;
        try {
            // the kernel's clock, as it stamped a cgroup just made: a JVM whose wall clock is off
            // (stepped, or faked) must not find a cgroup made a moment ago old
            before = made(Path.of(madeNow)).toMillis() - olderThan.toMillis();
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        List<String> empty = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(own.get(), PREFIX + "*." + store + ".*")) {
            for (Path dir : dirs) {
                try {
                    if (made(dir).toMillis() < before && populated(dir).equals(Optional.of(false))) {
                        empty.add(dir.toString());
                    }
                } catch (IOException | RuntimeException e) {
                    // removed meanwhile, or not a cgroup
                }
            }
        } catch (IOException | RuntimeException e) {
            // not readable: nothing to sweep
        }
        return empty;
    }

    /** When the kernel made {@code dir} (its inode's change time, which a cgroup's directory keeps). */
    private static FileTime made(Path dir) throws IOException {
        Object ctime = Files.readAttributes(dir, "unix:ctime", LinkOption.NOFOLLOW_LINKS).get("ctime");
        if (!(ctime instanceof FileTime t)) {
            throw new IOException("no change time for " + dir);
        }
        return t;
    }

    /** Loads libc through JNA when first touched, and only then. */
    private static final class Holder {
        static final LibC LIBC = Native.load(dev.proclive.posix.CLibrary.load().getName(), LibC.class);
    }

    interface LibC extends Library {
        int prctl(int option, long arg2, long arg3, long arg4, long arg5) throws LastErrorException;

        int waitpid(int pid, Pointer status, int options) throws LastErrorException;
    }
}
