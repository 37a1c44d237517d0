package dev.proclive.posix;

import java.util.OptionalInt;

/**
 * {@code O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK} (and the same with {@code O_RDWR}) for
 * {@code open(2)}, per OS and CPU
 * (the values differ: {@code O_NOFOLLOW} is {@code 0400000} on x86 Linux, {@code 0100000} on arm).
 * Pure: names in, flags out, so every OS's table is tested on every OS.
 */
public final class OpenFlags {

    private OpenFlags() {
    }

    /**
     * The flags for {@code os} ({@code "linux"} or {@code "mac"}) on {@code arch} (JNA's
     * {@code Platform.ARCH} names: {@code x86-64}, {@code aarch64}, …), or empty where they are not known.
     */
    public static OptionalInt readOnlyNoFollow(String os, String arch) {
        if (os.equals("mac")) {
            return OptionalInt.of(0x100 | 0x1000000 | 0x4); // O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK
        }
        if (!os.equals("linux")) {
            return OptionalInt.empty();
        }
        int cloexec = 02000000;
        int nonblock = 04000;
        switch (arch) {
            case "x86":
            case "x86-64":
            case "riscv64":
            case "s390x":
            case "loongarch64":
                return OptionalInt.of(0400000 | cloexec | nonblock);
            case "aarch64":
            case "arm":
            case "armel":
            case "ppc":
            case "ppc64":
            case "ppc64le":
                return OptionalInt.of(0100000 | cloexec | nonblock);
            default:
                return OptionalInt.empty();
        }
    }

    /**
     * {@link #readOnlyNoFollow} with {@code O_RDWR} (2 on Linux and macOS) in place of
     * {@code O_RDONLY}: a descriptor only a process that may write the file can open.
     */
    public static OptionalInt readWriteNoFollow(String os, String arch) {
        OptionalInt readOnly = readOnlyNoFollow(os, arch);
        return readOnly.isPresent() ? OptionalInt.of(readOnly.getAsInt() | 2) : readOnly;
    }
}
