package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.platform.Platform;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Removing dead writers' files costs what a directory holds, which another user may flood: it runs
 * after the lease's lock is let go, and one pass stops at its deadline, the rest left to the next.
 */
class CleaningTest {

    @TempDir
    Path dir;

    private static final String STALE = "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":3000,\"grants\":{\"build\":3}}";

    @Test
    void cleaningHoldsNoLeasesLock() throws Exception {
        Files.writeString(dir.resolve(".session.4242-1.aa"), STALE);
        CountDownLatch cleaning = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        Identity self = ProcLive.identify(ProcessHandle.current().pid()).orElseThrow();
        LeaseFiles files = LeaseFiles.open(dir, self, writer -> {
            if (first.getAndSet(false)) { // the first pass is stuck on its first file, as on a flooded directory
                cleaning.countDown();
                try {
                    goOn.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return false;
        }, false, Platform.fileLocker());
        files.cleanEvery(Duration.ZERO);
        try {
            CompletableFuture<Void> stuck = CompletableFuture.runAsync(() -> {
                try {
                    files.locked("build", guard -> null);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            assertThat(cleaning.await(30, TimeUnit.SECONDS)).as("the first call cleans").isTrue();
            String locked = files.locked("build", Duration.ofSeconds(2), guard -> "locked");
            assertThat(locked).as("the lease's lock is free while it cleans").isEqualTo("locked");
            goOn.countDown();
            stuck.get(30, TimeUnit.SECONDS);
        } finally {
            goOn.countDown();
            files.close();
        }
    }

    /**
     * A cleaner whose clock is ahead (10 minutes here, by the store's clock) judges a session file by
     * the clock that stamped it, read by making a file: a file just written is kept though its writer
     * is proven DEAD (by a name that says no PID namespace), while a dead writer's temporary file goes
     * in the same pass.
     */
    @Test
    void aCleanerWhoseClockIsAheadRemovesNoSessionFileStillKept() throws Exception {
        Path kept = dir.resolve(".session.4242-1.aa");
        Files.writeString(kept, "{\"renewedAt\":\"" + dev.proclive.lease.book.Records.timestamp(Instant.now())
                + "\",\"ttlMillis\":10000,\"grants\":{\"build\":3}}");
        Identity dead = new Identity(4242, "1", "", "", "", "");
        Path leftover = dir.resolve(new TemporaryName("build", dead, "0123456789abcdef").toString());
        Files.writeString(leftover, "{");
        Identity self = ProcLive.identify(ProcessHandle.current().pid()).orElseThrow();
        LeaseFiles files = LeaseFiles.open(dir, self, writer -> writer.pid() == 4242, false, Platform.fileLocker());
        files.clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofMinutes(10)));
        files.cleanEvery(Duration.ZERO);
        try {
            files.locked("build", guard -> null); // cleans once the lock is let go, on this thread
        } finally {
            files.close();
        }
        assertThat(leftover).as("the pass ran: a dead writer's temporary file is gone").doesNotExist();
        assertThat(kept).as("written a moment ago by the file system's clock").exists();
    }

    private long sessionFiles() throws IOException {
        try (var listed = Files.list(dir)) {
            return listed.filter(f -> f.getFileName().toString().startsWith(SessionFile.PREFIX)).count();
        }
    }

    @Test
    void onePassStopsAtItsDeadlineAndTheNextGoesOn() throws Exception {
        for (int i = 0; i < 20; i++) {
            Files.writeString(dir.resolve(".session." + (4000 + i) + "-1.aa"), STALE);
        }
        Optional<Instant> later = Optional.of(Instant.now().plus(SessionFiles.SKEW).plusSeconds(10)); // each kept no more
        SessionFiles.clean(dir, writer -> true, () -> later, Platform.fileLocker(), System.nanoTime() - 1);
        assertThat(sessionFiles()).as("a pass past its deadline removes nothing").isEqualTo(20);
        SessionFiles.clean(dir, writer -> true, () -> later, Platform.fileLocker(),
                System.nanoTime() + TimeUnit.MINUTES.toNanos(10));
        assertThat(sessionFiles()).as("the next pass, in time, removes every dead writer's").isZero();
    }

    /**
     * The file system's clock is read by making a file: only when some session file's writer is
     * proven DEAD, once a pass; where it cannot be read, nothing is removed.
     */
    @Test
    void theFileSystemsClockIsReadOnlyForADeadWritersFileAndWithoutItNothingIsRemoved() throws Exception {
        Files.writeString(dir.resolve(".session.4242-1.aa"), STALE);
        Files.writeString(dir.resolve(".session.4243-1.bb"), STALE);
        long unbounded = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        SessionFiles.clean(dir, writer -> false, () -> {
            reads.incrementAndGet();
            return Optional.of(Instant.now().plus(java.time.Duration.ofHours(2)));
        }, Platform.fileLocker(), unbounded);
        assertThat(reads).as("no writer proven DEAD: no file made").hasValue(0);
        SessionFiles.clean(dir, writer -> true, () -> {
            reads.incrementAndGet();
            return Optional.empty();
        }, Platform.fileLocker(), unbounded);
        assertThat(reads).as("read once, though two writers are DEAD").hasValue(1);
        assertThat(sessionFiles()).as("no clock to judge them by: both kept").isEqualTo(2);
    }
}
