package dev.proclive.posix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Flock#read}: a store's files read without following a link and without waiting on a FIFO
 * put in a file's place, where the JDK's open to read waits for a writer forever.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class FlockReadTest {

    @TempDir
    Path dir;

    static void mkfifo(Path path) throws Exception {
        Process p = new ProcessBuilder("mkfifo", path.toString()).start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("mkfifo " + path).isZero();
    }

    @Test
    void readsAFileWholeOrOneByteMoreThanAsked() throws Exception {
        byte[] text = new byte[20_000]; // more than one read's chunk
        new Random(7).nextBytes(text);
        Path file = Files.write(dir.resolve("record"), text);
        for (FileLocker files : new FileLocker[] {new Flock(), Platform.fileLocker()}) {
            assertThat(files.read(file, 1 << 20)).isEqualTo(text);
            assertThat(files.read(file, text.length)).isEqualTo(text);
            assertThat(files.read(file, 10)).as("one past the most: it holds more").hasSize(11)
                    .isEqualTo(java.util.Arrays.copyOf(text, 11));
            assertThat(files.read(Files.write(dir.resolve("empty"), new byte[0]), 10)).isEmpty();
        }
    }

    @Test
    void aFifoReadsAsEmptyAtOnce() throws Exception {
        Path fifo = dir.resolve("record");
        mkfifo(fifo);
        for (FileLocker files : new FileLocker[] {new Flock(), Platform.fileLocker()}) {
            byte[] read = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> files.read(fifo, 1 << 20),
                    "the JDK's open to read waits here for a writer");
            assertThat(read).isEmpty();
        }
    }

    @Test
    void aLinkIsNotFollowedAndAMissingFileIsSaid() throws Exception {
        Path target = Files.writeString(dir.resolve("elsewhere"), "{}");
        Path link = Files.createSymbolicLink(dir.resolve("record"), target);
        assertThatThrownBy(() -> new Flock().read(link, 100)).isInstanceOf(IOException.class)
                .isNotInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> new Flock().read(dir.resolve("none"), 100)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> new Flock().read(dir, 100)).as("a directory").isInstanceOf(IOException.class);
    }
}
