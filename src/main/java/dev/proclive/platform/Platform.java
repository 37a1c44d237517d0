package dev.proclive.platform;

import dev.proclive.Identity;
import dev.proclive.linux.LinuxProcessIntrospector;
import dev.proclive.linux.ProcMount;
import dev.proclive.macos.MacosProcessIntrospector;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.spi.internal.FileLocker;
import dev.proclive.spi.ProcessIntrospector;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * The one platform switch: which implementations serve this OS, decided from {@code os.name},
 * read here and nowhere else. An OS proclive does not know gets the unsupported introspector,
 * never an exception.
 */
public final class Platform {

    /** The operating systems proclive tells apart. */
    public enum Os {
        LINUX, MAC, WINDOWS, OTHER
    }

    /*
     * A hook's cold JVM loads this class to pick the introspector, and nothing else of it: no Os
     * constant is made for Linux, the OS is compared with ifs (a switch on an enum loads a synthetic
     * class), and what only leases need is picked in a class of its own.
     */
    private static final String OS_NAME = System.getProperty("os.name", "");
    private static final boolean LINUX = linux(OS_NAME);

    private Platform() {
    }

    /** The OS this JVM runs on. */
    public static Os os() {
        return os(OS_NAME);
    }

    /** The OS an {@code os.name} names. */
    public static Os os(String osName) {
        if (linux(osName)) {
            return Os.LINUX;
        }
        String os = osName.toLowerCase(Locale.ROOT);
        if (os.startsWith("mac") || os.startsWith("darwin")) {
            return Os.MAC;
        }
        return os.startsWith("windows") ? Os.WINDOWS : Os.OTHER;
    }

    private static boolean linux(String osName) {
        return osName.regionMatches(true, 0, "linux", 0, 5);
    }

    /** The introspector that reads this OS's processes. */
    public static ProcessIntrospector introspector() {
        return introspector(OS_NAME);
    }

    /** The introspector for the OS {@code osName} names. */
    public static ProcessIntrospector introspector(String osName) {
        return Introspectors.of(osName);
    }

    /**
     * The owner of the calling process, when this OS finds it the plain way with the fewest classes
     * loaded ({@link ProcMount#owner} on Linux), empty when that walk plainly ends without one; null
     * when it cannot tell, and the general owner walk decides. For a hook's cold JVM:
     * {@code ProcLive.resolveOwner()}.
     *
     * @param skip the default skip set, its names separated by single spaces
     */
    public static Optional<Identity> plainOwner(String skip, int maxDepth) {
        return LINUX ? ProcMount.system().owner(skip, maxDepth) : null;
    }

    /**
     * Whether {@code identity} is proven ALIVE the plain way with the fewest classes loaded
     * ({@link ProcMount#alive} on Linux); false is no verdict: the general check decides. For a
     * hook's cold JVM: {@code ProcLive.check}.
     */
    public static boolean plainlyAlive(Identity identity) {
        return LINUX && ProcMount.system().alive(identity);
    }

    /**
     * What the kernel tracks of a command's descendants: Linux's subreaper and cgroups, elsewhere
     * nothing ({@link Descendants#NONE}).
     */
    public static Descendants descendants() {
        return ForLeases.descendants(linux(OS_NAME));
    }

    /**
     * The lock a lease store takes on its guard files: {@code LockFileEx} on Windows, else
     * {@code flock(2)} through JNA; without JNA, a locker whose every lock fails with an
     * {@link IOException} that says what to add.
     */
    public static FileLocker fileLocker() {
        return fileLocker(os());
    }

    /** The lease's lock for {@code os}. */
    static FileLocker fileLocker(Os os) {
        return ForLeases.fileLocker(os);
    }

    /**
     * The introspectors, picked in a class of their own: a method that returns one of them as a
     * {@link ProcessIntrospector} makes the verifier load that interface with the class, and a hook's
     * cold JVM loads this one ({@link #plainOwner}, {@link #plainlyAlive}) without it.
     */
    private static final class Introspectors {
        static ProcessIntrospector of(String osName) {
            if (linux(osName)) {
                return LinuxProcessIntrospector.system();
            }
            if (os(osName) == Os.MAC) {
                return MacosProcessIntrospector.system();
            }
            return new UnsupportedProcessIntrospector(osName);
        }
    }

    /**
     * What only leases need, picked here so that loading {@link Platform} to pick an introspector
     * does not load these types too (the verifier loads the type a method returns when the value
     * returned is of another class).
     */
    private static final class ForLeases {
        static Descendants descendants(boolean linux) {
            return linux ? dev.proclive.linux.LinuxDescendants.INSTANCE : Descendants.NONE;
        }

        static FileLocker fileLocker(Os os) {
            return os == Os.WINDOWS ? new dev.proclive.windows.ChannelLocker() : new FlockOrExplain();
        }
    }

    /** {@code flock}, loaded on the first lock: when JNA is not there, every lock says so. */
    private static final class FlockOrExplain implements FileLocker {
        @Override
        public Lock lock(Path file, java.time.Duration most) throws IOException {
            try {
                return new dev.proclive.posix.Flock().lock(file, most);
            } catch (LinkageError e) { // JNA is not on the class or module path
                throw new FileSystemException(file.toString(), null, "cannot lock: " + jnaMissing(e));
            }
        }

        /**
         * Opened with {@code O_NONBLOCK} through JNA ({@link dev.proclive.posix.Flock#read}): neither
         * a FIFO nor the break of another process's file lease on it is waited for. Not opened to
         * read and write instead, which a FIFO does not wait for either: such an open waits for a
         * read lease's break, up to {@code /proc/sys/fs/lease-break-time} (45 s), and the file's
         * owner may take the lease again each time. Without JNA (no lock either), as the JDK opens.
         */
        @Override
        public byte[] read(Path file, int most) throws IOException {
            try {
                return new dev.proclive.posix.Flock().read(file, most);
            } catch (LinkageError noJna) {
                return FileLocker.super.read(file, most);
            }
        }

        /** Why JNA is missing, and the fix: on the module path, the module to add; on the class path, the jar. */
        private static String jnaMissing(LinkageError e) {
            String fix = Platform.class.getModule().isNamed()
                    ? "on the module path, add \"requires com.sun.jna;\" to the application's module-info.java"
                            + " or run java with --add-modules com.sun.jna"
                    : "put net.java.dev.jna:jna on the class path";
            return "JNA (net.java.dev.jna:jna) cannot load (" + e + "): " + fix;
        }
    }
}
