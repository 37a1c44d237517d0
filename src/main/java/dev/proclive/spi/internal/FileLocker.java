package dev.proclive.spi.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
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
     * Locks {@code file}, a regular file that exists, waiting for it as long as it takes; the lock
     * also excludes another locker of this process on the same file.
     *
     * @throws IOException when the file cannot be opened or locked, or this platform cannot lock
     *                     (the message says why and what to do)
     */
    Lock lock(Path file) throws IOException;

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
