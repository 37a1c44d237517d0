package dev.proclive.posix;

import com.sun.jna.LastErrorException;
import com.sun.jna.NativeLong;
import com.sun.jna.Platform;
import dev.proclive.spi.internal.Elapsed;
import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.BasicFileAttributes;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The lease's lock on Linux and macOS: {@code flock(2)} on a descriptor opened here through JNA
 * ({@code O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK}, {@link OpenFlags}). The lock belongs to
 * that open file description, so no other close in the JVM can drop it, and it also excludes
 * another descriptor of the same process: two threads, or two copies of the library, in one JVM
 * exclude each other as two processes do. Only a process that may write the file can open it so
 * (the store gives its guards no permission to a class of users that cannot write the directory):
 * a mere reader cannot hold writers out. The lock is tried without blocking
 * ({@code LOCK_EX | LOCK_NB}); when another holds it, a blocking {@code flock} is waited for until
 * the caller's bound has passed ({@link Elapsed}: no clock step stretches it): a holder stopped
 * inside its section makes others fail with {@link Busy}, never hang. EINTR is retried. A lock
 * taken on a file that was replaced meanwhile (another file renamed over its path: a store replaces
 * a guard so, holding its lock, to shut out descriptors opened before) is let go and the file in
 * its place locked instead, within the same bound: what the lock returns is on the file at the path.
 */
public final class Flock implements FileLocker {

    @Override
    public Lock lock(Path file, Duration most) throws IOException {
        Calls.ensureLoaded(file);
        Elapsed waited = Elapsed.bounded(most);
        while (true) {
            Held held = lockOnce(file, most, waited);
            if (held.isAt(file)) {
                return held;
            }
            held.close(); // replaced while this waited: the lock that counts is the one on the file in its place
            if (waited.over()) {
                throw new Busy(file, most);
            }
        }
    }

    /**
     * Opens {@code file} with {@code O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK}: a FIFO in its
     * place opens at once and reads as empty (no writer: end of file; a writer that wrote nothing:
     * EAGAIN, taken as the end), a link fails (ELOOP), and a file whose lease another process
     * holds is denied for now ({@link AccessDeniedException}; EWOULDBLOCK, where a plain open waits
     * for the lease's break, up to {@code /proc/sys/fs/lease-break-time}). Where the flags are not
     * known, the JDK's open.
     */
    @Override
    public byte[] read(Path file, int most) throws IOException {
        if (Calls.UNSUPPORTED != null) {
            return FileLocker.super.read(file, most);
        }
        int fd = -1;
        while (fd < 0) {
            try {
                fd = Calls.open(Calls.path(file), Calls.READ_FLAGS);
            } catch (LastErrorException e) {
                int errno = e.getErrorCode();
                if (errno == Calls.ENOENT) {
                    throw new NoSuchFileException(file.toString());
                }
                if (errno == Calls.EWOULDBLOCK) { // denied for now: a session file's reader then takes it as fresh
                    throw fileLeased(file);
                }
                if (errno != Calls.EINTR) {
                    throw errno == Calls.EACCES ? new AccessDeniedException(file.toString())
                            : failure(file, "open to read", e);
                }
            }
        }
        try {
            byte[] read = new byte[(int) Math.min(most + 1L, 8192)];
            byte[] chunk = new byte[read.length];
            int n = 0;
            while (n <= most) {
                int got;
                try {
                    got = (int) Calls.read(fd, chunk, new NativeLong(Math.min(chunk.length, most + 1L - n))).longValue();
                } catch (LastErrorException e) {
                    if (e.getErrorCode() == Calls.EINTR) {
                        continue;
                    }
                    if (e.getErrorCode() == Calls.EWOULDBLOCK) {
                        break; // a FIFO whose writer wrote nothing
                    }
                    throw failure(file, "read", e);
                }
                if (got <= 0) {
                    break; // the end
                }
                if (n + got > read.length) {
                    read = Arrays.copyOf(read, (int) Math.min(most + 1L, Math.max(2L * read.length, n + got)));
                }
                System.arraycopy(chunk, 0, read, n, got);
                n += got;
            }
            return n == read.length ? read : Arrays.copyOf(read, n);
        } finally {
            closeQuietly(fd);
        }
    }

    /** Opens {@code file} and locks what it opened, within {@code waited}. */
    private static Held lockOnce(Path file, Duration most, Elapsed waited) throws IOException {
        int fd;
        try {
            fd = Calls.open(Calls.path(file), Calls.OPEN_FLAGS);
        } catch (LastErrorException e) {
            throw e.getErrorCode() == Calls.EWOULDBLOCK ? fileLeased(file) : failure(file, "open for writing", e);
        }
        boolean handedOver = false;
        try {
            while (true) {
                try {
                    Calls.flock(fd, Calls.LOCK_EX | Calls.LOCK_NB);
                    return new Held(fd);
                } catch (LastErrorException e) {
                    if (e.getErrorCode() == Calls.EINTR) {
                        continue;
                    }
                    if (e.getErrorCode() != Calls.EWOULDBLOCK) {
                        throw failure(file, "flock", e);
                    }
                }
                break;
            }
            if (waited.over()) {
                throw new Busy(file, most);
            }
            Waiter w = new Waiter(fd);
            handedOver = true; // from here the descriptor is the waiter's until it is told the outcome
            return w.await(file, most, waited);
        } catch (IOException | RuntimeException | Error e) {
            if (!handedOver) {
                closeQuietly(fd);
            }
            throw e;
        }
    }

    /**
     * A blocking {@code flock(2)} on a thread of its own ({@code proclive-lock-wait}): the kernel
     * wakes a blocked waiter the moment the lock is let go, as it does not wake one that tries again
     * later (a holder that takes the lock again at once would shut a polling waiter out for good).
     * The caller waits for it within its bound; one that gives up leaves the descriptor to the
     * thread, which closes it (and with it the lock) when its {@code flock} returns — the
     * descriptor is never closed under a call still using it, so its number cannot be reused under
     * the lock. Until then the thread waits for the holder, however long it is stopped.
     */
    private static final class Waiter implements Runnable {
        private final int fd;
        private final java.util.concurrent.CompletableFuture<Void> locked = new java.util.concurrent.CompletableFuture<>();
        /** Guarded by this: whether the caller gave up, so that the thread lets the lock go. */
        private boolean abandoned;

        Waiter(int fd) {
            this.fd = fd;
            Thread t = new Thread(this, "proclive-lock-wait");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void run() {
            LastErrorException failed = null;
            while (true) {
                try {
                    Calls.flock(fd, Calls.LOCK_EX);
                    break;
                } catch (LastErrorException e) {
                    if (e.getErrorCode() != Calls.EINTR) {
                        failed = e;
                        break;
                    }
                }
            }
            synchronized (this) {
                if (abandoned || failed != null) {
                    closeQuietly(fd);
                }
                if (failed != null) {
                    locked.completeExceptionally(failed);
                } else {
                    locked.complete(null);
                }
            }
        }

        Held await(Path file, Duration most, Elapsed waited) throws IOException {
            boolean interrupted = false;
            try {
                Elapsed.await(locked, waited.left());
            } catch (InterruptedException e) {
                interrupted = true;
            }
            synchronized (this) {
                if (locked.isDone() && !locked.isCompletedExceptionally() && !interrupted) {
                    return new Held(fd);
                }
                if (locked.isDone() && !locked.isCompletedExceptionally()) {
                    closeQuietly(fd); // taken as the interrupt came: let go at once
                } else if (!locked.isDone()) {
                    abandoned = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for the lock on " + file);
            }
            if (locked.isCompletedExceptionally()) {
                try {
                    locked.join();
                } catch (java.util.concurrent.CompletionException e) {
                    throw failure(file, "flock", (LastErrorException) e.getCause());
                }
            }
            throw new Busy(file, most);
        }
    }

    private static void closeQuietly(int fd) {
        try {
            Calls.close(fd);
        } catch (LastErrorException e) {
            // close(2) frees the descriptor even when it reports an error; the lock is gone
        }
    }

    /** An open with O_NONBLOCK that another process's file lease holds out: said, never waited for. */
    private static AccessDeniedException fileLeased(Path file) {
        return new AccessDeniedException(file.toString(), null, "another process holds a file lease on it"
                + " (fcntl F_SETLEASE) and has not yet let it go; nothing was changed: try again");
    }

    /** EACCES as the JDK says it ({@link AccessDeniedException}), so that a caller can tell it apart. */
    private static IOException failure(Path file, String call, LastErrorException e) {
        String why = call + " failed: " + e.getMessage();
        return e.getErrorCode() == Calls.EACCES ? new AccessDeniedException(file.toString(), null, why)
                : new FileSystemException(file.toString(), null, why);
    }

    private static final class Held implements Lock {
        private static final Path DESCRIPTORS = Path.of(Platform.isMac() ? "/dev/fd" : "/proc/self/fd");
        private static final boolean DESCRIPTORS_THERE = Files.isDirectory(DESCRIPTORS);
        private final int fd;

        Held(int fd) {
            this.fd = fd;
        }

        /**
         * Whether the locked descriptor is still the file at {@code file} (device and inode, the
         * link not followed): a file renamed over it since it was opened is the one writers lock
         * now. Where the descriptor's identity cannot be read (no {@code /proc}), taken as yes.
         */
        boolean isAt(Path file) throws IOException {
            Object locked;
            try {
                locked = Files.readAttributes(descriptor(), BasicFileAttributes.class).fileKey();
            } catch (IOException e) {
                return true;
            }
            try {
                return locked == null || locked.equals(Files.readAttributes(file, BasicFileAttributes.class,
                        LinkOption.NOFOLLOW_LINKS).fileKey());
            } catch (NoSuchFileException e) {
                return false; // removed meanwhile: opened again, it is made anew or its absence is said
            }
        }

        private Path descriptor() {
            return DESCRIPTORS.resolve(Integer.toString(fd));
        }

        @Override
        public Optional<Path> file() {
            return DESCRIPTORS_THERE ? Optional.of(descriptor()) : Optional.empty();
        }

        @Override
        public void close() {
            closeQuietly(fd); // the lock goes with its last descriptor
        }
    }

    /**
     * The C library's calls and this platform's flag values, loaded on the first lock or read. The calls
     * are bound directly ({@code Native.register}): no proxy, no reflection per call.
     */
    private static final class Calls {
        static final int LOCK_EX = 2;
        static final int LOCK_NB = 4;
        static final int EINTR = 4;
        static final int ENOENT = 2;
        static final int EACCES = 13;
        /** EWOULDBLOCK (EAGAIN): 11 on Linux, 35 on macOS. */
        static final int EWOULDBLOCK = Platform.isMac() ? 35 : 11;
        static final String UNSUPPORTED;
        static final int OPEN_FLAGS;
        /** {@link OpenFlags#readOnlyNoFollow}: what {@link Flock#read} opens with. */
        static final int READ_FLAGS;
        private static final Charset PATH_ENCODING;

        static {
            OptionalInt flags = OptionalInt.empty();
            OptionalInt readFlags = OptionalInt.empty();
            String unsupported = null;
            try {
                String os = Platform.isMac() ? "mac" : Platform.isLinux() ? "linux" : "other";
                flags = OpenFlags.readWriteNoFollow(os, Platform.ARCH);
                readFlags = OpenFlags.readOnlyNoFollow(os, Platform.ARCH);
                if (flags.isEmpty()) {
                    unsupported = "no open(2) flags are known for " + Platform.ARCH + " on this OS";
                } else {
                    com.sun.jna.Native.register(Calls.class, CLibrary.load());
                }
            } catch (LinkageError e) {
                unsupported = "JNA (net.java.dev.jna:jna) cannot load its native part: " + e;
            }
            OPEN_FLAGS = flags.orElse(0);
            READ_FLAGS = readFlags.orElse(0);
            UNSUPPORTED = unsupported;
            String jnu = System.getProperty("sun.jnu.encoding");
            PATH_ENCODING = jnu != null && Charset.isSupported(jnu) ? Charset.forName(jnu) : Charset.defaultCharset();
        }

        private Calls() {
        }

        static native int open(byte[] path, int flags) throws LastErrorException;

        static native int flock(int fd, int operation) throws LastErrorException;

        static native int close(int fd) throws LastErrorException;

        static native NativeLong read(int fd, byte[] buffer, NativeLong count) throws LastErrorException;

        static void ensureLoaded(Path file) throws IOException {
            if (UNSUPPORTED != null) {
                throw new FileSystemException(file.toString(), null, "cannot lock: " + UNSUPPORTED);
            }
        }

        /** The path as the kernel takes it, NUL-terminated, in the encoding the JDK uses for paths. */
        static byte[] path(Path file) {
            byte[] bytes = file.toString().getBytes(PATH_ENCODING);
            byte[] c = new byte[bytes.length + 1];
            System.arraycopy(bytes, 0, c, 0, bytes.length);
            return c;
        }
    }
}
