package dev.proclive.spi.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;

/**
 * The seam through which a lease store excludes other processes: an exclusive lock on a file that
 * exists, owned by the open file description (or handle) the locker opened for it, so that no
 * other close in the process can drop it. Linux and macOS: {@code flock(2)}; Windows:
 * {@code LockFileEx}. Not {@code FileChannel.lock()} on POSIX: that is an {@code fcntl} lock,
 * dropped when any descriptor of the process on the file closes. It also reads the files a store
 * shares ({@link #read}) without waiting on one that is not a regular file.
 */
public interface FileLocker {

    /**
     * The first bytes of {@code file}, {@code most + 1} at most (as many says it holds more than
     * {@code most}), read without following a link in its place and without waiting for what is
     * not a regular file. Whoever may rename in a store's directory can put a FIFO where a record
     * was, after the caller found a regular file there: a plain open to read then waits for a
     * writer forever, and with it the store's look at every grant, or a lock's holder with the lock.
     * On Linux and macOS such a FIFO reads as empty. This default serves Windows, which has no FIFO
     * in a directory, and a POSIX system without JNA: a FIFO (or any file that is neither regular nor
     * a directory nor a link) found there reads as empty, unopened; one put in its place between that
     * look and the open, as the JDK opens to read, still waits.
     *
     * @throws java.nio.file.NoSuchFileException when nothing is there
     * @throws IOException when it cannot be opened or read (a link in its place among them)
     */
    default byte[] read(Path file, int most) throws IOException {
        if (Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther()) {
            return new byte[0];
        }
        try (SeekableByteChannel in = Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            return upTo(in, most);
        }
    }

    /**
     * The bytes of {@code in}, just opened, no more than its size says it holds (a FIFO's is 0:
     * nothing is read from one, nor is it sought) and no more than {@code most + 1}.
     */
    private static byte[] upTo(SeekableByteChannel in, int most) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) Math.min(in.size(), most + 1L));
        while (b.hasRemaining() && in.read(b) >= 0) {
            // read it all
        }
        return b.position() == b.capacity() ? b.array() : Arrays.copyOf(b.array(), b.position());
    }

    /**
     * Locks {@code file}, a regular file that exists and that this process may write (a process
     * that may only read it cannot take the lock, so a reader never holds writers out), waiting
     * for it at most {@code most} (measured on a monotonic clock); the lock also excludes another
     * locker of this process on the same file. The lock returned is on the file at {@code file}
     * when it returns: where a file can be renamed over another that is open (POSIX), a lock taken
     * on a file replaced while it was waited for is let go and the new one locked, within the bound.
     *
     * @throws Busy        when another holder kept it locked for all of {@code most}
     * @throws IOException when the file cannot be opened or locked, or this platform cannot lock
     *                     (the message says why and what to do)
     */
    Lock lock(Path file, Duration most) throws IOException;

    /** The lock stayed taken by another holder for as long as the caller would wait. */
    final class Busy extends FileSystemException {
        private static final long serialVersionUID = 1L;

        /** {@code file} stayed locked for {@code most}. */
        public Busy(Path file, Duration most) {
            this(file, most, "");
        }

        /** {@code file} stayed locked for {@code most}; {@code more} (a sentence or empty) says what else may hold it. */
        public Busy(Path file, Duration most, String more) {
            super(file.toString(), null, "locked by another process for longer than " + most.toMillis() + " ms (one"
                    + " stopped or hung while it held the lock, e.g. by ^Z or SIGSTOP); nothing was changed: try again"
                    + " once it goes on or ends (fuser " + file + " names it)" + (more.isEmpty() ? "" : ". " + more));
        }

        private Busy(Path file, String reason) {
            super(file.toString(), null, reason);
        }

        /** {@code file} stayed locked for {@code most} by another thread of this process. */
        public static Busy inThisProcess(Path file, Duration most) {
            return new Busy(file, "locked by another thread of this process for longer than " + most.toMillis()
                    + " ms; nothing was changed: try again");
        }
    }

    /** A lock held; {@link #close()} releases it. */
    interface Lock extends AutoCloseable {

        /**
         * The channel the lock is held through, if it is one: where a lock is mandatory (Windows),
         * the file must be read and written through the handle that holds it.
         */
        default Optional<FileChannel> channel() {
            return Optional.empty();
        }

        /**
         * A path that opens the very file the lock is on, whatever was renamed to its name since
         * ({@code /proc/self/fd/N} on Linux); empty where there is none.
         */
        default Optional<Path> file() {
            return Optional.empty();
        }

        /** Releases the lock. */
        @Override
        void close() throws IOException;
    }
}
