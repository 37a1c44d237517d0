package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.ProcLive;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.FileLocker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lease's lock held by another thread of the same process for all of a caller's wait is said so:
 * not as a process stopped while it held the lock, which sends a reader to look for one.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class InJvmBusyTest {

    @TempDir
    Path dir;

    @Test
    void aLockAnotherThreadHereHoldsIsSaidToBeThisProcesss() throws Exception {
        LeaseFiles files = LeaseFiles.open(dir, ProcLive.current().orElseThrow(), id -> false, false,
                Platform.fileLocker());
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        CompletableFuture<Void> holding = CompletableFuture.runAsync(() -> {
            try {
                files.locked("build", guard -> {
                    inside.countDown();
                    try {
                        letGo.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return null;
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> files.locked("build", Duration.ofMillis(100), guard -> null))
                    .isInstanceOf(FileLocker.Busy.class).hasMessageContaining("another thread of this process")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("SIGSTOP"));
        } finally {
            letGo.countDown();
            holding.get(30, TimeUnit.SECONDS);
            files.close();
        }
    }
}
