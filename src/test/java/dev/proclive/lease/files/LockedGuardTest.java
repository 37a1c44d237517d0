package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.ProcLive;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fence goes into the guard the lock is on: a file renamed to the guard's name after the lock was
 * taken (whoever may rename in the directory; a hard link to another's file among them) is never written.
 */
@EnabledOnOs(OS.LINUX)
class LockedGuardTest {

    @TempDir
    Path tmp;

    @Test
    void aFileRenamedToTheGuardsNameOnceItIsLockedIsNeverWritten() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("leases"));
        Files.writeString(dir.resolve("build.guard"), "5");
        Path planted = Files.writeString(tmp.resolve("planted"), "no fence\n"); // break would rewrite it
        Path target = tmp.resolve("someone-elses");
        Files.createLink(target, planted); // what the planted name is another name of
        AtomicBoolean armed = new AtomicBoolean(true);
        FileLocker locker = new FileLocker() {
            @Override
            public Lock lock(Path file, Duration most) throws IOException {
                Lock taken = Platform.fileLocker().lock(file, most);
                if (armed.getAndSet(false)) {
                    Files.move(planted, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                }
                return taken;
            }
        };
        LeaseFiles files = LeaseFiles.open(dir, ProcLive.current().orElseThrow(), id -> false, false, locker);
        try {
            assertThatThrownBy(() -> files.locked("build", guard -> {
                guard.repair();
                return null;
            })).isInstanceOf(IOException.class).hasMessageContaining("replaced while it was locked");
            assertThat(Files.readString(target)).isEqualTo("no fence\n");
        } finally {
            files.close();
        }
    }
}
