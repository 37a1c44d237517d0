package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseStore;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whoever may rename in a store's directory can put a FIFO where a record, guard, queue or
 * session file was, after the store found a regular file there and before it opens it. Opened to
 * read as the JDK opens, such a FIFO waits for a writer forever: the store's one look at every
 * grant stops, or a lock's holder waits with the lock held. Each read here has a FIFO put in place
 * of the file at that moment; none waits.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class FifoInPlaceTest {

    @TempDir
    Path dir;

    @RegisterExtension
    final Children children = new Children();

    /** Renames a new FIFO over {@code file}, and says so in {@code read}. */
    private static void fifoOver(Path file, List<String> read) throws IOException {
        read.add(file.getFileName().toString());
        Path fifo = file.resolveSibling("fifo-" + read.size());
        try {
            Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
            assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("mkfifo").isZero();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        Files.move(fifo, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void aFifoPutInAFilesPlaceAfterItWasFoundWaitsForNothing() throws Exception {
        Identity holder = children.sleeping();
        Identity self = ProcLive.current().orElseThrow();
        long fence;
        try (LeaseStore store = LeaseStore.open(dir)) {
            fence = ((dev.proclive.lease.Acquisition.Granted) store.acquire("build", holder)).lease().fence();
        }
        Files.writeString(dir.resolve("build.queue"), LeaseJson.waiter(new LeaseBook.Waiter(self, self,
                Instant.now().plusSeconds(60))) + "\n");
        String session = ".session.1-1.aa";
        Files.writeString(dir.resolve(session), "{\"renewedAt\":\"" + dev.proclive.lease.book.Records.timestamp(
                Instant.now()) + "\",\"ttlMillis\":30000,\"grants\":{\"build\":" + fence + "}}");
        List<String> read = new CopyOnWriteArrayList<>();
        FileLocker fifos = new SwapBeforeRead(Platform.fileLocker(), file -> fifoOver(file, read));
        LeaseFiles files = LeaseFiles.open(dir, self, id -> false, false, fifos);

        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            List<LeaseBook.Waiter> queue = files.locked("build", LeaseBook.Guard::waiters);
            assertThat(queue).as("the queue, read by the lock's holder").isEmpty();
            assertThat(SessionFiles.renewedAt(dir, "build", fence, Instant.now(), java.util.Optional.empty(), fifos)).as("a session file").isEmpty();
            assertThatThrownBy(() -> files.highestFence("build")).as("the guard").isInstanceOf(LeaseCorruptException.class)
                    .hasMessageContaining("something other than a file stands where build.guard should be; remove it by hand");
            assertThatThrownBy(() -> files.read("build")).as("the record").isInstanceOf(LeaseCorruptException.class)
                    .hasMessageContaining("something other than a file stands where build.lease should be; break the lease to go on (proclive lease break build)");
        }, "a read waits on a FIFO");
        assertThat(read).as("each read through the store's reader")
                .contains("build.queue", session, "build.guard", "build.lease");
    }

    /** Without JNA (and on Windows) a reader opens as the JDK does: a FIFO found in a file's place is not opened. */
    @Test
    void theDefaultReaderReadsAFifoFoundInPlaceAsEmptyWithoutOpeningIt() throws Exception {
        Path file = dir.resolve("build.lease");
        Files.writeString(file, "{}");
        fifoOver(file, new CopyOnWriteArrayList<>());
        FileLocker withoutJna = (f, most) -> {
            throw new IOException("no lock here");
        };
        byte[] bytes = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> withoutJna.read(file, 100),
                "the default reader waits on a FIFO");
        assertThat(bytes).isEmpty();
        Files.delete(file);
        Files.writeString(file, "{\"a\":1}");
        assertThat(withoutJna.read(file, 100)).as("a regular file is read as before").hasSize(7);
    }
}
