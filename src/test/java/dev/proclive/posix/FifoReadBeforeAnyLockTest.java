package dev.proclive.posix;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Cli;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The platform's reader in a JVM that never locked (as {@code lease show} runs): a FIFO in a
 * file's place reads as empty at once. In the test JVM a lock has usually loaded JNA already.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class FifoReadBeforeAnyLockTest {

    @TempDir
    Path dir;

    @Test
    void aFifoReadsAsEmptyAtOnce() throws Exception {
        Path fifo = dir.resolve("record");
        FlockReadTest.mkfifo(fifo);
        Process p = new ProcessBuilder(Cli.java(), "-cp", System.getProperty("java.class.path"),
                ReadBeforeAnyLockMain.class.getName(), fifo.toString()).redirectErrorStream(true).start();
        boolean ended = p.waitFor(60, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        assertThat(ended).as("the read waits on the FIFO").isTrue();
        assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip()).isEqualTo("0");
    }
}
