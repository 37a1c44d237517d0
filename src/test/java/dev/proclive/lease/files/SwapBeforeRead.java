package dev.proclive.lease.files;

import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A store's reader that, before each read, has {@code swap} put something else in the file's place:
 * what whoever may rename in the directory can do between the store's check that a regular file is
 * there and its open. Locks go to {@code platform} unchanged.
 */
record SwapBeforeRead(FileLocker platform, Swap swap) implements FileLocker {

    /** What is done to {@code file} just before it is read. */
    interface Swap {
        void over(Path file) throws IOException;
    }

    @Override
    public Lock lock(Path file, Duration most) throws IOException {
        return platform.lock(file, most);
    }

    @Override
    public byte[] read(Path file, int most) throws IOException {
        swap.over(file);
        return platform.read(file, most);
    }
}
