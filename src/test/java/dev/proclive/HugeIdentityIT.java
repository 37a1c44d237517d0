package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A corrupt identity cannot take its caller's JVM down: a verdict quotes a short prefix of each value. */
class HugeIdentityIT {

    @Test
    void tenMebibyteValuesAreExplainedUnderA64MebibyteHeap() throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                HugeIdentityMain.class.getName(), "10").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        List<String> lines = out.lines().toList();
        assertThat(lines).as(out).hasSize(5);
        for (String line : lines) {
            assertThat(Integer.parseInt(line.split(" ")[1])).as(line).isLessThan(600);
        }
        assertThat(lines.get(0)).startsWith("OTHER_HOST");
        assertThat(lines.get(1)).startsWith("OTHER_HOST");
    }
}
