package dev.proclive.posix;

import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * The C library, loaded through JNA by the name the dynamic loader knows it by: glibc's
 * {@code libc.so.6} on Linux (a bare {@code c} would be looked for as {@code libc.so}, a linker
 * script, and then searched for), else {@link Platform#C_LIBRARY_NAME}. JNA still lists the
 * loader's paths once a JVM (it runs {@code ldconfig -p} on Linux) unless
 * {@code jna.platform.library.path} is set, as the command line sets it.
 */
public final class CLibrary {

    private CLibrary() {
    }

    /**
     * The C library.
     *
     * @throws UnsatisfiedLinkError if it cannot be loaded
     * @throws LinkageError         if JNA is not there
     */
    public static NativeLibrary load() {
        if (Platform.isLinux()) {
            try {
                return NativeLibrary.getInstance("libc.so.6");
            } catch (UnsatisfiedLinkError notGlibc) {
                // musl and others: by the platform's name below
            }
        }
        return NativeLibrary.getInstance(Platform.C_LIBRARY_NAME);
    }
}
