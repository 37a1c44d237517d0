package dev.proclive;

import dev.proclive.linux.LinuxProcessIntrospector;
import dev.proclive.macos.MacosProcessIntrospector;
import dev.proclive.spi.ProcessIntrospector;
import java.util.Locale;

/**
 * The one place that picks the introspector for the running OS, once. An OS proclive does not
 * know gets the unsupported one, never an exception.
 */
final class Platform {

    static final LivenessChecker CHECKER = LivenessChecker.of(forOs(System.getProperty("os.name", "")));

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
