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
 * The lease's lock on Windows: {@link FileChannel#lock()}, which is {@code LockFileEx} there,
 * owned by its handle. The JDK's own overlap check (which spans class loaders) is waited out,
 * never thrown; the lock is mandatory, so the file is read and written through {@link Lock#channel()}.
 */
public final class ChannelLocker implements FileLocker {

    @Override
    public Lock lock(Path file) throws IOException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            while (true) {
                try {
                    FileLock lock = channel.lock();
                    assert lock.isValid();
                    return new Held(channel);
                } catch (OverlappingFileLockException e) {
                    // held through another channel of this JVM (another copy of the library): wait it out
                    Thread.sleep(1);
                }
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
