package dev.proclive.linux;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import dev.proclive.spi.Descendants;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

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
    private static final SecureRandom RANDOM = new SecureRandom();

    /** One move of this process into a cgroup and back at a time. */
    private final ReentrantLock moving = new ReentrantLock();
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
     * command) end up its children, and each would stay a zombie until the next look. One daemon
     * thread looks every two seconds.
     */
    private static void startReaper() {
        Thread reaper = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(2_000);
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
        long self = ProcessHandle.current().pid();
        String listed;
        try {
            listed = Files.readString(Path.of("/proc/self/task", Long.toString(self), "children"), StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // no CONFIG_PROC_CHILDREN, or the main thread is gone
        }
        List<long[]> live = new ArrayList<>();
        for (String word : listed.trim().split("\\s+")) {
            if (word.isEmpty()) {
                continue;
            }
            long pid = Long.parseLong(word);
            Optional<StatLine> stat = EnvironScan.located(Path.of("/proc", Long.toString(pid), "stat"));
            if (stat.isEmpty()) {
                continue; // reaped since it was listed
            }
            if (StatLine.state(stat.get().stateByte()) != dev.proclive.spi.ProcessState.LIVE) {
                reap(pid);
                continue;
            }
            if (stat.get().startTicks() >= floor) {
                live.add(new long[] {pid, stat.get().startTicks()}); // older ones are another command's, or nobody's
            }
        }
        live.sort(Comparator.<long[]>comparingLong(p -> p[1]).thenComparingLong(p -> p[0]));
        List<Long> pids = new ArrayList<>();
        live.forEach(p -> pids.add(p[0]));
        return Optional.of(pids);
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
    public Optional<String> newCgroup(String lease) {
        Optional<Path> own;
        moving.lock(); // where this process is, not where a start has it for a moment
        try {
            own = ownCgroup();
        } finally {
            moving.unlock();
        }
        if (own.isEmpty() || !Files.isWritable(own.get().resolve("cgroup.procs"))) {
            return Optional.empty();
        }
        Path made = own.get().resolve("proclive." + lease + "." + HexFormat.of().formatHex(bits()));
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

    @Override
    public <T> T startInside(String cgroup, Start<T> start) throws IOException {
        moving.lock(); // before reading where this process is: another start may have it elsewhere this moment
        try {
            Path own = ownCgroup().orElseThrow(() -> new IOException("this process's cgroup cannot be found"));
            // Writing 0 moves the writer's whole process; what it starts meanwhile is born inside.
            Files.writeString(Path.of(cgroup, "cgroup.procs"), "0\n", StandardCharsets.US_ASCII);
            try {
                return start.start();
            } finally {
                Files.writeString(own.resolve("cgroup.procs"), "0\n", StandardCharsets.US_ASCII);
            }
        } finally {
            moving.unlock();
        }
    }

    @Override
    public Optional<List<Long>> members(String cgroup) {
        Path dir = Path.of(cgroup);
        if (!dir.getFileName().toString().startsWith("proclive.")) {
            return Optional.empty(); // not one this library made: nothing it says is a proof here
        }
        try {
            List<Long> pids = new ArrayList<>();
            for (String line : Files.readAllLines(dir.resolve("cgroup.procs"), StandardCharsets.US_ASCII)) {
                if (!line.isBlank()) {
                    pids.add(Long.parseLong(line.trim()));
                }
            }
            return Optional.of(pids);
        } catch (NoSuchFileException e) {
            // Removed, which the kernel allows only once it is empty: if its parent is a cgroup this
            // process sees, nothing is in it and nothing can enter it again.
            Path parent = dir.getParent();
            return parent != null && Files.isRegularFile(parent.resolve("cgroup.procs")) && !Files.exists(dir)
                    ? Optional.of(List.of()) : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public void remove(String cgroup) {
        try {
            if (Path.of(cgroup).getFileName().toString().startsWith("proclive.")) {
                Files.deleteIfExists(Path.of(cgroup));
            }
        } catch (DirectoryNotEmptyException e) {
            // cgroupfs says EBUSY for a populated cgroup; either way it stays
        } catch (IOException | RuntimeException e) {
            // someone else removed it, or it is not ours to remove
        }
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
