package dev.proclive.lease;

import com.sun.jna.LastErrorException;
import com.sun.jna.Platform;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.Charset;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The lock on a guard file that excludes other processes, owned by the open file description the
 * store opened for it, so that no other close in this process can drop it.
 *
 * <p>On Linux and macOS: {@code flock(2)} on a descriptor opened here through JNA
 * ({@code O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK}). Not {@link FileChannel#lock()}: that is
 * a POSIX {@code fcntl} lock, and the kernel drops every {@code fcntl} lock a process holds on a
 * file when <em>any</em> descriptor on that file is closed in it — other code opening the guard, a
 * second copy of this library in another class loader, the same directory through a bind mount.
 * A {@code flock} lock also excludes another descriptor of the same process, so two threads (or
 * two copies of the library) in one JVM exclude each other as two processes do.
 *
 * <p>On Windows: {@link FileChannel#lock()}, which is {@code LockFileEx}, already owned by its
 * handle; the JDK's own overlap check (which spans class loaders) is waited out, never thrown.
 */
abstract class GuardLock implements AutoCloseable {

    /** Locks {@code guard}, a regular file that exists, waiting for it as long as it takes. */
    static GuardLock lock(Path guard) throws IOException {
        if (System.getProperty("os.name", "").startsWith("Windows")) {
            return ChannelLock.lock(guard);
        }
        try {
            return Flock.lock(guard);
        } catch (LinkageError e) { // JNA is not on the class or module path
            throw new FileSystemException(guard.toString(), null, "cannot lock: " + jnaMissing(e));
        }
    }

    /** Why JNA is missing, and the fix: where this library runs on the module path, the module to add. */
    static String jnaMissing(LinkageError e) {
        String fix = GuardLock.class.getModule().isNamed()
                ? "on the module path, add \"requires com.sun.jna;\" to the application's module-info.java"
                        + " or run java with --add-modules com.sun.jna"
                : "put net.java.dev.jna:jna on the class path";
        return "JNA (net.java.dev.jna:jna) cannot load (" + e + "): " + fix;
    }

    /** Releases the lock. */
    @Override
    public abstract void close() throws IOException;

    /**
     * The channel the lock is held through, if it is one: on Windows a lock is mandatory, and the
     * guard's fence must be read and written through the handle that holds it.
     */
    java.util.Optional<FileChannel> channel() {
        return java.util.Optional.empty();
    }

    /** {@code flock(2)} through JNA. */
    private static final class Flock extends GuardLock {

        private static final int LOCK_EX = 2;
        private static final int EINTR = 4;

        private final int fd;

        private Flock(int fd) {
            this.fd = fd;
        }

        static Flock lock(Path guard) throws IOException {
            Calls.ensureLoaded(guard);
            int fd;
            try {
                fd = Calls.open(Calls.path(guard), Calls.OPEN_FLAGS);
            } catch (LastErrorException e) {
                throw failure(guard, "open", e);
            }
            try {
                while (true) {
                    try {
                        Calls.flock(fd, LOCK_EX);
                        return new Flock(fd);
                    } catch (LastErrorException e) {
                        if (e.getErrorCode() != EINTR) {
                            throw failure(guard, "flock", e);
                        }
                    }
                }
            } catch (IOException | RuntimeException | Error e) {
                closeQuietly(fd);
                throw e;
            }
        }

        @Override
        public void close() throws IOException {
            closeQuietly(fd); // the lock goes with its last descriptor
        }

        private static void closeQuietly(int fd) {
            try {
                Calls.close(fd);
            } catch (LastErrorException e) {
                // close(2) frees the descriptor even when it reports an error; the lock is gone
            }
        }

        private static IOException failure(Path guard, String call, LastErrorException e) {
            return new FileSystemException(guard.toString(), null, call + " failed: " + e.getMessage());
        }
    }

    /**
     * The C library's calls and this platform's flag values, loaded on the first lock. The calls
     * are mapped directly ({@code Native.register}): a lock is taken on every lease call, and a
     * direct call costs a fraction of one through an interface's proxy. Each takes and returns only
     * {@code int}s, the same on every ABI.
     */
    private static final class Calls {

        /** Why no lock can be taken here, or null when one can. */
        private static final String UNSUPPORTED;
        static final int OPEN_FLAGS;
        private static final Charset PATH_ENCODING;

        static {
            Integer flags = null;
            String unsupported = null;
            try {
                flags = openFlags();
                if (flags == null) {
                    unsupported = "no open(2) flags are known for " + Platform.ARCH + " on this OS";
                } else {
                    com.sun.jna.Native.register(Calls.class, dev.proclive.posix.CLibrary.load());
                }
            } catch (LinkageError e) {
                unsupported = jnaMissing(e);
            }
            OPEN_FLAGS = flags == null ? 0 : flags;
            UNSUPPORTED = unsupported;
            String jnu = System.getProperty("sun.jnu.encoding");
            PATH_ENCODING = jnu != null && Charset.isSupported(jnu) ? Charset.forName(jnu) : Charset.defaultCharset();
        }

        private Calls() {
        }

        static native int open(byte[] path, int flags) throws LastErrorException;

        static native int flock(int fd, int operation) throws LastErrorException;

        static native int close(int fd) throws LastErrorException;

        static void ensureLoaded(Path guard) throws IOException {
            if (UNSUPPORTED != null) {
                throw new FileSystemException(guard.toString(), null, "cannot lock: " + UNSUPPORTED);
            }
        }

        /** The path as the kernel takes it, NUL-terminated, in the encoding the JDK uses for paths. */
        static byte[] path(Path file) {
            byte[] bytes = file.toString().getBytes(PATH_ENCODING);
            byte[] c = new byte[bytes.length + 1];
            System.arraycopy(bytes, 0, c, 0, bytes.length);
            return c;
        }

        /** O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, or null where the values are not known. */
        private static Integer openFlags() {
            if (Platform.isMac()) {
                return 0x100 | 0x1000000 | 0x4;
            }
            if (!Platform.isLinux()) {
                return null;
            }
            int cloexec = 02000000;
            int nonblock = 04000;
            switch (Platform.ARCH) {
                case "x86":
                case "x86-64":
                case "riscv64":
                case "s390x":
                case "loongarch64":
                    return 0400000 | cloexec | nonblock;
                case "aarch64":
                case "arm":
                case "armel":
                case "ppc":
                case "ppc64":
                case "ppc64le":
                    return 0100000 | cloexec | nonblock;
                default:
                    return null;
            }
        }
    }

    /** {@link FileChannel#lock()}, for Windows. */
    private static final class ChannelLock extends GuardLock {

        private final FileChannel channel;

        private ChannelLock(FileChannel channel) {
            this.channel = channel;
        }

        static ChannelLock lock(Path guard) throws IOException {
            FileChannel channel = FileChannel.open(guard, StandardOpenOption.READ, StandardOpenOption.WRITE);
            try {
                while (true) {
                    try {
                        FileLock lock = channel.lock();
                        assert lock.isValid();
                        return new ChannelLock(channel);
                    } catch (OverlappingFileLockException e) {
                        // held through another channel of this JVM (another copy of the library): wait it out
                        Thread.sleep(1);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                channel.close();
                throw new java.io.InterruptedIOException("interrupted while waiting for " + guard);
            } catch (IOException | RuntimeException | Error e) {
                channel.close();
                throw e;
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }

        @Override
        java.util.Optional<FileChannel> channel() {
            return java.util.Optional.of(channel);
        }
    }
}
