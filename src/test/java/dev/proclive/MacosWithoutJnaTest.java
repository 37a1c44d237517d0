package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The macOS backend with JNA absent from the class path: every answer is UNKNOWN
 * {@code UNSUPPORTED_PLATFORM}, never a {@code NoClassDefFoundError}. Runs on every OS, in a child
 * JVM whose class path holds proclive's classes and this test's, and no JNA.
 */
class MacosWithoutJnaTest {

    /** Judges an identity and records one through the macOS backend; prints what came out. */
    public static final class Main {
        public static void main(String[] args) {
            LivenessChecker mac = LivenessChecker.of(dev.proclive.platform.Platform.introspector("Mac OS X"));
            System.out.println(mac.explain(new Identity(1, "1.000000", "", "", "", "")).reason());
            System.out.println(mac.check(new Identity(1, "1.000000", "", "host", "", "")));
            System.out.println(mac.current().isPresent() + " " + mac.identify(1).isPresent());
        }
    }

    private static String location(Class<?> type) throws Exception {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    @Test
    void withoutJnaEveryAnswerIsUnsupportedPlatform() throws Exception {
        String classPath = location(LivenessChecker.class) + java.io.File.pathSeparator + location(Main.class);
        assertThat(classPath).doesNotContain("jna");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classPath, Main.class.getName()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out.lines()).as(out).containsExactly("UNSUPPORTED_PLATFORM", "UNKNOWN", "false false");
        assertThat(p.exitValue()).isZero();
    }
}
