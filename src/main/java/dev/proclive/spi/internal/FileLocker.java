package dev.proclive.spi.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The seam through which a lease store excludes other processes: an exclusive lock on a file that
 * exists, owned by the open file description (or handle) the locker opened for it, so that no
 * other close in the process can drop it. Linux and macOS: {@code flock(2)}; Windows:
 * {@code LockFileEx}. Not {@code FileChannel.lock()} on POSIX: that is an {@code fcntl} lock,
 * dropped when any descriptor of the process on the file closes.
 */
public interface FileLocker {

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

        /** Releases the lock. */
        @Override
        void close() throws IOException;
    }
}
