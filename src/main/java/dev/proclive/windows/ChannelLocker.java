package dev.proclive.windows;

import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * The lease's lock on Windows: {@link FileChannel#tryLock()}, which is {@code LockFileEx} there,
 * owned by its handle, on a channel opened for writing. It is tried again, backing off, until the
 * caller's bound has passed ({@link Busy}); the JDK's own overlap check (which spans class loaders)
 * is waited out the same way, never thrown. The lock is mandatory, so the file is read and written
 * through {@link Lock#channel()}.
 */
public final class ChannelLocker implements FileLocker {

    @Override
    public Lock lock(Path file, java.time.Duration most) throws IOException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        dev.proclive.spi.internal.Elapsed waited = dev.proclive.spi.internal.Elapsed.bounded(most);
        try {
            long nap = 1;
            while (true) {
                try {
                    FileLock lock = channel.tryLock();
                    if (lock != null) {
                        return new Held(channel);
                    }
                } catch (OverlappingFileLockException e) {
                    // held through another channel of this JVM (another copy of the library): wait it out
                }
                long left = waited.leftNanos();
                if (left <= 0) {
                    throw new Busy(file, most);
                }
                Thread.sleep(Math.max(1, Math.min(nap, left / 1_000_000)));
                nap = Math.min(50, nap * 2);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            channel.close();
            throw new InterruptedIOException("interrupted while waiting for " + file);
        } catch (IOException | RuntimeException | Error e) {
            channel.close();
            throw e;
        }
    }

    private static final class Held implements Lock {
        private final FileChannel channel;

        Held(FileChannel channel) {
            this.channel = channel;
        }

        @Override
        public Optional<FileChannel> channel() {
            return Optional.of(channel);
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}
