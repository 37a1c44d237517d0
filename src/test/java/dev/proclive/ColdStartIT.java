package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** The Linux happy path never touches JNA: resolve the owner and check it in a fresh JVM. */
@EnabledOnOs(OS.LINUX)
class ColdStartIT {

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String testClasses() {
        return Path.of(System.getProperty("proclive.testClasses", "target/test-classes")).toAbsolutePath().toString();
    }

    @Test
    void runsWithNeitherJnaNorJacksonOnTheClassPath() throws Exception {
        String library = Path.of(System.getProperty("proclive.jar")).toAbsolutePath().toString();
        String out = run(List.of(java(), "-cp", library + File.pathSeparator + testClasses(),
                ColdStartMain.class.getName()));
        assertThat(out.strip()).isEqualTo("ALIVE");
    }

    @Test
    void loadsNoJnaClassWhenJnaIsThere() throws Exception {
        String cli = Path.of(System.getProperty("proclive.cliJar")).toAbsolutePath().toString();
        List<String> command = new ArrayList<>(List.of(java(), "-verbose:class",
                "-cp", cli + File.pathSeparator + testClasses(), ColdStartMain.class.getName()));
        String out = run(command);
        assertThat(out).contains("dev.proclive.linux.LinuxProcessIntrospector").contains("ALIVE");
        assertThat(out.lines().filter(l -> l.contains("com.sun.jna"))).isEmpty();
    }
}
