package dev.proclive.posix;

import com.sun.jna.LastErrorException;
import com.sun.jna.Platform;
import dev.proclive.spi.internal.Elapsed;
import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.file.FileSystemException;
import java.io.InterruptedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * The lease's lock on Linux and macOS: {@code flock(2)} on a descriptor opened here through JNA
 * ({@code O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK}, {@link OpenFlags}). The lock belongs to
 * that open file description, so no other close in the JVM can drop it, and it also excludes
 * another descriptor of the same process: two threads, or two copies of the library, in one JVM
 * exclude each other as two processes do. Only a process that may write the file can open it so
 * (the store gives its guards no permission to a class of users that cannot write the directory):
 * a mere reader cannot hold writers out. The lock is tried without blocking
 * ({@code LOCK_EX | LOCK_NB}) and tried again, backing off up to {@value #MAX_NAP_MS} ms, until the
 * caller's bound has passed ({@link Elapsed}: no clock step stretches it): a holder stopped inside its section
 * makes others fail with {@link Busy}, never hang. EINTR is retried.
 */
public final class Flock implements FileLocker {

    /** The longest pause between two tries of a lock another holder has. */
    static final long MAX_NAP_MS = 50;

    @Override
    public Lock lock(Path file, Duration most) throws IOException {
        Calls.ensureLoaded(file);
        Elapsed waited = Elapsed.bounded(most);
        int fd;
        try {
            fd = Calls.open(Calls.path(file), Calls.OPEN_FLAGS);
        } catch (LastErrorException e) {
            throw failure(file, "open for writing", e);
        }
        try {
            long nap = 1;
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
                long left = waited.leftNanos();
                if (left <= 0) {
                    throw new Busy(file, most);
                }
                Thread.sleep(Math.max(1, Math.min(nap, TimeUnit.NANOSECONDS.toMillis(left))));
                nap = Math.min(MAX_NAP_MS, nap * 2);
            }
        } catch (InterruptedException e) {
            closeQuietly(fd);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the lock on " + file);
        } catch (IOException | RuntimeException | Error e) {
            closeQuietly(fd);
            throw e;
        }
    }

    private static void closeQuietly(int fd) {
        try {
            Calls.close(fd);
        } catch (LastErrorException e) {
            // close(2) frees the descriptor even when it reports an error; the lock is gone
        }
    }

    private static IOException failure(Path file, String call, LastErrorException e) {
        return new FileSystemException(file.toString(), null, call + " failed: " + e.getMessage());
    }

    private static final class Held implements Lock {
        private final int fd;

        Held(int fd) {
            this.fd = fd;
        }

        @Override
        public void close() {
            closeQuietly(fd); // the lock goes with its last descriptor
        }
    }

    /**
     * The C library's calls and this platform's flag values, loaded on the first lock. The calls
     * are bound directly ({@code Native.register}): no proxy, no reflection per call.
     */
    private static final class Calls {
        static final int LOCK_EX = 2;
        static final int LOCK_NB = 4;
        static final int EINTR = 4;
        /** EWOULDBLOCK (EAGAIN): 11 on Linux, 35 on macOS. */
        static final int EWOULDBLOCK = Platform.isMac() ? 35 : 11;
        static final String UNSUPPORTED;
        static final int OPEN_FLAGS;
        private static final Charset PATH_ENCODING;

        static {
            OptionalInt flags = OptionalInt.empty();
            String unsupported = null;
            try {
                flags = OpenFlags.readWriteNoFollow(Platform.isMac() ? "mac" : Platform.isLinux() ? "linux" : "other",
                        Platform.ARCH);
                if (flags.isEmpty()) {
                    unsupported = "no open(2) flags are known for " + Platform.ARCH + " on this OS";
                } else {
                    com.sun.jna.Native.register(Calls.class, CLibrary.load());
                }
            } catch (LinkageError e) {
                unsupported = "JNA (net.java.dev.jna:jna) cannot load its native part: " + e;
            }
            OPEN_FLAGS = flags.orElse(0);
            UNSUPPORTED = unsupported;
            String jnu = System.getProperty("sun.jnu.encoding");
            PATH_ENCODING = jnu != null && Charset.isSupported(jnu) ? Charset.forName(jnu) : Charset.defaultCharset();
        }

        private Calls() {
        }

        static native int open(byte[] path, int flags) throws LastErrorException;

        static native int flock(int fd, int operation) throws LastErrorException;

        static native int close(int fd) throws LastErrorException;

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
