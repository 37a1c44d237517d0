package dev.proclive;

import dev.proclive.linux.LinuxProcessIntrospector;
import dev.proclive.macos.MacosProcessIntrospector;
import dev.proclive.spi.ProcessIntrospector;
import java.util.Locale;

/**
 * The one platform switch: which introspector reads this OS, decided once from {@code os.name}.
 * An OS proclive does not know gets the unsupported introspector, never an exception.
 */
final class Platform {

    /** The checker {@link ProcLive} and the default {@link OwnerResolver} use. */
    static final LivenessChecker SYSTEM = LivenessChecker.of(forOs(System.getProperty("os.name", "")));

    private Platform() {
    }

    static ProcessIntrospector forOs(String osName) {
        String os = osName.toLowerCase(Locale.ROOT);
        if (os.startsWith("linux")) {
            return LinuxProcessIntrospector.system();
        }
        if (os.startsWith("mac") || os.startsWith("darwin")) {
            return MacosProcessIntrospector.system();
        }
        return new UnsupportedProcessIntrospector(osName);
    }
}
