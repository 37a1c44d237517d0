package dev.proclive.linux;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import dev.proclive.spi.internal.ExitEvents;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Exit events on Linux: one {@code pidfd_open(2)} descriptor per watched process (it becomes
 * readable when the process exits, before it is reaped), all waited on by one {@code epoll}
 * instance, and an {@code eventfd} to wake the waiter. Loaded through JNA by the first watch only.
 *
 * <p>A watch falls back to polling (returns {@link Registration.Unavailable}) when the kernel has
 * no {@code pidfd_open} (before 5.3: ENOSYS), a sandbox refuses it (EPERM, or ENOSYS from a
 * seccomp filter), the process is out of descriptors (EMFILE, ENFILE), or the watches already hold
 * half of this process's descriptor limit: the rest of the program keeps the other half.
 */
public final class PidfdEvents implements ExitEvents {

    private static final long SYS_PIDFD_OPEN = 434; // the same number on every architecture since 5.1
    private static final int O_CLOEXEC = 02000000;
    private static final int EFD_NONBLOCK = 04000;
    private static final int EPOLLIN = 1;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_DEL = 2;
    private static final int EINTR = 4;
    private static final int ESRCH = 3;
    private static final long WAKE = -1;

    /** {@code struct epoll_event}: packed (12 bytes) on x86-64 only; elsewhere its data is 8-aligned. */
    private static final int EVENT_SIZE = "x86-64".equals(Platform.ARCH) ? 12 : 16;
    private static final int DATA_OFFSET = "x86-64".equals(Platform.ARCH) ? 4 : 8;

    private final LibC libc;
    private final int epoll;
    private final int wake;
    private final long budget;
    private final AtomicInteger open = new AtomicInteger();
    private final Memory readyEvents;
    private volatile boolean closed;

    private PidfdEvents(LibC libc, int epoll, int wake, long budget, int capacity) {
        this.libc = libc;
        this.epoll = epoll;
        this.wake = wake;
        this.budget = budget;
        this.readyEvents = new Memory((long) EVENT_SIZE * capacity);
    }

    /**
     * The events of this process, or empty when JNA, {@code epoll} or {@code eventfd} are not to
     * be had (then every watch polls).
     */
    public static Optional<ExitEvents> open() {
        if (!Platform.is64Bit()) {
            return Optional.empty(); // the calls below are mapped for LP64 only
        }
        LibC libc;
        try {
            libc = Native.load(dev.proclive.posix.CLibrary.load().getName(), LibC.class);
        } catch (LinkageError e) {
            return Optional.empty();
        }
        int epoll = -1;
        try {
            epoll = libc.epoll_create1(O_CLOEXEC);
            int wake = libc.eventfd(0, O_CLOEXEC | EFD_NONBLOCK);
            PidfdEvents events = new PidfdEvents(libc, epoll, wake, descriptorBudget(), 256);
            events.add(wake, WAKE);
            return Optional.of(events);
        } catch (LastErrorException e) {
            if (epoll >= 0) {
                closeQuietly(libc, epoll);
            }
            return Optional.empty();
        }
    }

    /** Half of this process's soft limit of open files, from {@code /proc/self/limits}. */
    static long descriptorBudget() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Max open files")) {
                    return budgetOf(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: assume the smallest common limit
        }
        return 512;
    }

    /** The budget a {@code Max open files} line of {@code /proc/self/limits} leaves the watches. */
    static long budgetOf(String limitsLine) {
        String[] fields = limitsLine.substring("Max open files".length()).trim().split("\\s+");
        if (fields.length == 0 || fields[0].equals("unlimited")) {
            return Integer.MAX_VALUE;
        }
        try {
            return Long.parseLong(fields[0]) / 2;
        } catch (NumberFormatException e) {
            return 512;
        }
    }

    @Override
    public Registration watch(long pid) {
        if (closed) {
            return new Registration.Unavailable("the exit events were closed");
        }
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
            return new Registration.Gone();
        }
        if (open.incrementAndGet() > budget) {
            open.decrementAndGet();
            return new Registration.Unavailable("the watches hold half of this process's descriptor limit");
        }
        int fd;
        try {
            fd = (int) libc.syscall(SYS_PIDFD_OPEN, pid, 0);
        } catch (LastErrorException e) {
            open.decrementAndGet();
            if (e.getErrorCode() == ESRCH) {
                return new Registration.Gone();
            }
            return new Registration.Unavailable("pidfd_open: " + e.getMessage()); // ENOSYS, EPERM, EMFILE...
        }
        try {
            add(fd, fd);
        } catch (LastErrorException e) {
            closeQuietly(libc, fd);
            open.decrementAndGet();
            return new Registration.Unavailable("epoll_ctl: " + e.getMessage());
        }
        return new Registration.Watching(fd);
    }

    private void add(int fd, long data) {
        try (Memory event = new Memory(EVENT_SIZE)) {
            event.clear();
            event.setInt(0, EPOLLIN);
            event.setLong(DATA_OFFSET, data);
            libc.epoll_ctl(epoll, EPOLL_CTL_ADD, fd, event);
        }
    }

    @Override
    public void unwatch(long handle) {
        if (handle < 0 || handle > Integer.MAX_VALUE) {
            return;
        }
        int fd = (int) handle;
        try {
            libc.epoll_ctl(epoll, EPOLL_CTL_DEL, fd, null);
        } catch (LastErrorException e) {
            // closing removes it anyway
        }
        closeQuietly(libc, fd);
        open.decrementAndGet();
    }

    @Override
    public int await(long timeoutMillis, long[] ready) {
        int max = (int) Math.min(ready.length, readyEvents.size() / EVENT_SIZE);
        int timeout = timeoutMillis < 0 ? -1 : (int) Math.min(timeoutMillis, Integer.MAX_VALUE);
        int n;
        try {
            n = libc.epoll_wait(epoll, readyEvents, max, timeout);
        } catch (LastErrorException e) {
            if (e.getErrorCode() == EINTR) {
                return 0;
            }
            throw new IllegalStateException("epoll_wait: " + e.getMessage(), e);
        }
        int count = 0;
        for (int i = 0; i < n; i++) {
            long data = readyEvents.getLong((long) i * EVENT_SIZE + DATA_OFFSET);
            if (data == WAKE) {
                drainWake();
            } else {
                ready[count++] = data;
            }
        }
        return count;
    }

    private void drainWake() {
        byte[] counter = new byte[8];
        try {
            libc.read(wake, counter, counter.length);
        } catch (LastErrorException e) {
            // EAGAIN: another wait drained it
        }
    }

    @Override
    public void wake() {
        byte[] one = new byte[8];
        one[java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN ? 0 : 7] = 1;
        try {
            libc.write(wake, one, one.length);
        } catch (LastErrorException e) {
            // EAGAIN: the counter is full of wakes already
        }
    }

    /** {@code PIDFD_GET_INFO}: {@code _IOWR(0xFF, 11, struct pidfd_info)} of its first published size, 64 bytes. */
    static final long PIDFD_GET_INFO = 0xC040FF0BL;
    /** {@code PIDFD_INFO_EXIT}: ask for (and, answered, say there is) the exit status. */
    static final long PIDFD_INFO_EXIT = 1L << 3;
    /** Where {@code struct pidfd_info} keeps {@code exit_code}: after mask, cgroupid and eleven ids. */
    static final int EXIT_CODE_OFFSET = 60;
    static final int INFO_SIZE = 64;

    @Override
    public java.util.OptionalInt exitStatus(long handle) {
        if (!tellsExitStatus || handle < 0 || handle > Integer.MAX_VALUE) {
            return java.util.OptionalInt.empty();
        }
        try (Memory info = new Memory(INFO_SIZE)) {
            info.clear();
            info.setLong(0, PIDFD_INFO_EXIT);
            libc.ioctl((int) handle, PIDFD_GET_INFO, info);
            return exitCode(info.getByteArray(0, INFO_SIZE));
        } catch (LastErrorException | UnsatisfiedLinkError e) {
            return java.util.OptionalInt.empty(); // ESRCH on an old kernel, ENOTTY before 6.13
        }
    }

    /** The exit code a {@code struct pidfd_info} holds, when its mask says it holds one. */
    static java.util.OptionalInt exitCode(byte[] info) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(info).order(java.nio.ByteOrder.nativeOrder());
        if ((b.getLong(0) & PIDFD_INFO_EXIT) == 0) {
            return java.util.OptionalInt.empty(); // not reaped yet
        }
        return java.util.OptionalInt.of(b.getInt(EXIT_CODE_OFFSET));
    }

    @Override
    public boolean tellsExitStatus() {
        return tellsExitStatus;
    }

    /** Linux 6.15 and later keep a reaped process's exit status for its pidfds. */
    private final boolean tellsExitStatus = kernelAtLeast(readRelease(), 6, 15);

    private static String readRelease() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/kernel/osrelease")).strip();
        } catch (java.io.IOException | RuntimeException e) {
            return "";
        }
    }

    /** Whether a kernel release ({@code 6.18.44-fc}) is {@code major.minor} or later; false for one it cannot read. */
    static boolean kernelAtLeast(String release, int major, int minor) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^(\\d+)\\.(\\d+)").matcher(release);
        if (!m.find()) {
            return false;
        }
        int ma = Integer.parseInt(m.group(1));
        int mi = Integer.parseInt(m.group(2));
        return ma > major || ma == major && mi >= minor;
    }

    @Override
    public void quiet(long handle) {
        if (handle >= 0 && handle <= Integer.MAX_VALUE) {
            try {
                libc.epoll_ctl(epoll, EPOLL_CTL_DEL, (int) handle, null);
            } catch (LastErrorException e) {
                // not registered any more
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(libc, epoll);
        closeQuietly(libc, wake);
    }

    private static void closeQuietly(LibC libc, int fd) {
        try {
            libc.close(fd);
        } catch (LastErrorException e) {
            // the descriptor is freed whatever close(2) reports
        }
    }

    /** The calls, mapped for LP64 Linux (long is 64 bits, as size_t and ssize_t are). */
    interface LibC extends Library {
        long syscall(long number, long pid, long flags) throws LastErrorException;

        int epoll_create1(int flags) throws LastErrorException;

        int epoll_ctl(int epfd, int op, int fd, com.sun.jna.Pointer event) throws LastErrorException;

        int epoll_wait(int epfd, com.sun.jna.Pointer events, int maxevents, int timeout) throws LastErrorException;

        int ioctl(int fd, long request, com.sun.jna.Pointer arg) throws LastErrorException;

        int eventfd(int initval, int flags) throws LastErrorException;

        long read(int fd, byte[] buffer, long count) throws LastErrorException;

        long write(int fd, byte[] buffer, long count) throws LastErrorException;

        int close(int fd) throws LastErrorException;
    }
}
