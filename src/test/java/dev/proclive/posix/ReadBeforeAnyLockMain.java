package dev.proclive.posix;

import dev.proclive.platform.Platform;
import java.nio.file.Path;

/** Reads a file through the platform's reader in a JVM that took no lock: prints how many bytes it read. */
public final class ReadBeforeAnyLockMain {

    private ReadBeforeAnyLockMain() {
    }

    public static void main(String[] args) throws Exception {
        byte[] read = Platform.fileLocker().read(Path.of(args[0]), 100);
        System.out.println(read.length);
    }
}
