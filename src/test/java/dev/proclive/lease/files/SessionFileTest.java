package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.lease.book.Records;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.FileLocker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A directory store's session file: what it says, what a newcomer reads of it, and when it is removed. */
class SessionFileTest {

    @TempDir
    Path dir;

    static final Instant AT = Instant.parse("2026-12-01T10:00:00Z");
    /** A reader's now, after every time the files here say. */
    static final Instant NOW = AT.plusSeconds(3600);

    /** How the store reads session files: the platform's reader, as {@code LeaseFiles} is given it. */
    static final FileLocker FILES = Platform.fileLocker();

    /** A deadline for one pass of cleaning that no test reaches. */
    private static long unbounded() {
        return System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(10);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** A cleaner's reading of the file system's clock. */
    private static java.util.function.Supplier<Optional<Instant>> fsAt(Instant now) {
        return () -> Optional.of(now);
    }

    /** Every grant it names. */
    private static Optional<SessionFiles.Read> parse(byte[] bytes) {
        return SessionFiles.parse(bytes, name -> true);
    }

    @Test
    void whatItSaysIsReadBack() {
        Optional<SessionFiles.Read> r = parse(bytes(
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":30000,\"grants\":{\"a\":3,\"b\":7}}\n"));
        assertThat(r).contains(new SessionFiles.Read(AT, 30000, Map.of("a", 3L, "b", 7L)));
        assertThat(parse(bytes("{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":0,\"grants\":{}}")))
                .as("the last write of a store that keeps nothing").contains(new SessionFiles.Read(AT, 0, Map.of()));
    }

    /** What a store writes is what a newcomer reads: every grant at its fence, the longest TTL, the write's time. */
    @Test
    void whatAStoreWritesANewcomerReads() throws Exception {
        java.util.List<byte[]> written = new java.util.concurrent.CopyOnWriteArrayList<>();
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""), (file, b) -> written.add(b));
        Instant before = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        try {
            session.keep("a", 3, Duration.ofSeconds(30), Instant.now());
            session.keep("b", 7, Duration.ofSeconds(10), Instant.now());
            dev.proclive.Eventually.until("a write naming both", Duration.ofSeconds(30), () -> written.stream()
                    .anyMatch(b -> parse(b).map(r -> r.grants().size() == 2).orElse(false)));
        } finally {
            session.close();
        }
        SessionFiles.Read r = written.stream().map(SessionFileTest::parse).flatMap(Optional::stream)
                .filter(read -> read.grants().size() == 2).findFirst().orElseThrow();
        assertThat(r.grants()).isEqualTo(Map.of("a", 3L, "b", 7L));
        assertThat(r.ttlMillis()).as("the longest TTL it keeps").isEqualTo(30_000);
        assertThat(r.renewedAt()).isBetween(before, Instant.now());
    }

    /** Its writer never answers: nothing the test checks is changed by a write. */
    private SessionFile unwritten(java.util.concurrent.CountDownLatch release) {
        return new SessionFile(dir, new Identity(1, "1", "", "", "", ""), (file, bytes) -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    @Test
    void aGrantAtAnotherFenceIsAnotherGrant() {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        SessionFile session = unwritten(release);
        try {
            assertThat(session.ttlNanos("build", 1)).as("never kept").isEmpty();
            assertThat(session.unconfirmed("build", 1)).isFalse();
            session.keep("build", 1, Duration.ofSeconds(30), Instant.now());
            session.keep("build", 2, Duration.ofSeconds(30), Instant.now()); // granted again: another grant
            assertThat(session.ttlNanos("build", 1)).as("the grant before").isEmpty();
            assertThat(session.ttlNanos("build", 2)).hasValue(Duration.ofSeconds(30).toNanos());
            session.drop("build", 1);
            assertThat(session.ttlNanos("build", 2)).as("not dropped by the end of the grant before").isPresent();
            session.drop("build", 2);
            assertThat(session.ttlNanos("build", 2)).isEmpty();
        } finally {
            release.countDown();
            session.close();
        }
    }

    /**
     * A grant kept again with another TTL (a renewal elsewhere, {@code lease renew --ttl}) counts from that renewal,
     * as a newcomer judges it; one read with an older {@code renewedAt} does not set it back.
     */
    @Test
    void aTtlChangedByARenewalCountsFromThatRenewal() {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        SessionFile session = unwritten(release);
        try {
            // renewed a minute ago with a TTL of 10 s: 3/4 of it went by unconfirmed long ago
            session.keep("build", 1, Duration.ofSeconds(10), Instant.now().minusSeconds(60));
            assertThat(session.unconfirmed("build", 1)).isTrue();
            session.keep("build", 1, Duration.ofSeconds(12), Instant.now()); // renewed now, for 12 s
            assertThat(session.unconfirmed("build", 1)).as("confirmed by that renewal, 9 s from now").isFalse();
            session.keep("build", 1, Duration.ofSeconds(11), Instant.now().minusSeconds(60)); // read late
            assertThat(session.unconfirmed("build", 1)).as("an older renewal sets nothing back").isFalse();
            assertThat(session.ttlNanos("build", 1)).hasValue(Duration.ofSeconds(11).toNanos());
        } finally {
            release.countDown();
            session.close();
        }
    }

    @Test
    void bytesThatAreNotOneAreNothing() {
        for (String text : new String[] {"", "[]", "{}", "not json",
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":30000}",
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":30000,\"grants\":{\"a\":3,\"a\":4}}",
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":30000,\"grants\":{\"a\":\"3\"}}",
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":30000,\"grants\":{},\"more\":1}",
                "{\"renewedAt\":\"yesterday\",\"ttlMillis\":30000,\"grants\":{}}",
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":30000,\"grants\":{}} {}",
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":0,\"ttlMillis\":5,\"grants\":{}}",
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":-1,\"grants\":{}}"}) {
            assertThat(parse(bytes(text))).as(text).isEmpty();
        }
    }

    @Test
    void itsNameSaysWhichProcessWroteIt() {
        assertThat(SessionFiles.writer(".session.4242-98765.0123456789abcdef"))
                .contains(new Identity(4242, "98765", "", "", "", ""));
        assertThat(SessionFiles.writer(".session.4242-1700000000.123456.0123456789abcdef"))
                .map(Identity::start).contains("1700000000.123456");
        assertThat(SessionFiles.writer("build.lease")).isEmpty();
        assertThat(SessionFiles.writer(".session.4242-98765.0123456789abcdef.tmp")).as("one being written").isEmpty();
        assertThat(SessionFiles.writer(".session.x-1.0123")).isEmpty();
    }

    @Test
    void aNewcomerReadsTheLatestFileThatNamesTheGrantAtItsFence() throws Exception {
        Files.writeString(dir.resolve(".session.1-1.aa"),
                "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":3000,\"grants\":{\"build\":3}}");
        Files.writeString(dir.resolve(".session.2-2.bb"),
                "{\"renewedAt\":\"2026-12-01T10:05:00.000Z\",\"ttlMillis\":3000,\"grants\":{\"build\":2}}");
        Files.writeString(dir.resolve(".session.3-3.cc"), "torn");
        Files.writeString(dir.resolve(".session.4-4.dd.tmp"),
                "{\"renewedAt\":\"2026-12-01T11:00:00.000Z\",\"ttlMillis\":3000,\"grants\":{\"build\":3}}");
        assertThat(SessionFiles.renewedAt(dir, "build", 3, NOW, Optional.empty(), FILES)).contains(AT);
        assertThat(SessionFiles.renewedAt(dir, "build", 2, NOW, Optional.empty(), FILES)).contains(AT.plusSeconds(300));
        assertThat(SessionFiles.renewedAt(dir, "build", 4, NOW, Optional.empty(), FILES)).isEmpty();
        assertThat(SessionFiles.renewedAt(dir, "other", 3, NOW, Optional.empty(), FILES)).isEmpty();
    }

    @Test
    void aDeadWritersFileIsRemovedOnceItKeepsNothingFresh() throws Exception {
        Path stale = dir.resolve(".session.1-1.aa");
        Path fresh = dir.resolve(".session.2-2.bb");
        Path alive = dir.resolve(".session.3-3.cc");
        String old = "{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":3000,\"grants\":{\"build\":3}}";
        Files.writeString(stale, old);
        Files.writeString(fresh, old.replace("3000", "3600000"));
        Files.writeString(alive, old);
        Instant written = Instant.now();
        SessionFiles.clean(dir, id -> id.pid() != 3, fsAt(written.plus(SessionFiles.SKEW).plusSeconds(10)), FILES, unbounded());
        assertThat(stale).as("a minute and its TTL past its last change").doesNotExist();
        assertThat(fresh).as("its TTL of an hour has not passed").exists();
        assertThat(alive).as("its writer is not proven DEAD").exists();
    }

    /**
     * A file's name says its writer's pid and start, not its PID namespace or host: a writer in
     * another, judged DEAD by a pid of this namespace, whose clock is behind (a {@code renewedAt}
     * a TTL older than the write), keeps its file while it writes it. It was removed, and a
     * newcomer taking UNKNOWN holders then judged its leases by their records alone.
     */
    @Test
    void aFileJustWrittenIsKeptWhateverTimeItSaysAndWhoeverItsNameSays() throws Exception {
        Path behind = dir.resolve(".session.2-1773978.aa");
        Files.writeString(behind, "{\"renewedAt\":\"" + Records.timestamp(Instant.now().minusSeconds(20))
                + "\",\"ttlMillis\":5000,\"grants\":{\"build\":1}}");
        Instant written = Instant.now();
        SessionFiles.clean(dir, id -> true, fsAt(written.plusSeconds(5)), FILES, unbounded());
        assertThat(behind).as("written a moment ago: a newcomer counts its time from then").exists();
        assertThat(SessionFiles.renewedAt(dir, "build", 1, written.plusSeconds(5), Optional.of(Duration.ZERO), FILES))
                .as("counted from its change, not 20 s before").get().matches(at -> at.isAfter(written.minusSeconds(5)));
        SessionFiles.clean(dir, id -> true, fsAt(written.plus(SessionFiles.SKEW).plusSeconds(10)), FILES, unbounded());
        assertThat(behind).as("unwritten for a minute and its TTL").doesNotExist();
    }

    /**
     * A file planted in a shared directory naming a great many grants whose names share one hash took
     * minutes to read (the map they were copied into probed them one after another), under the
     * lease's lock: everyone else's call failed meanwhile. A reader keeps only the name it asks
     * after; past its budget it reads no more, and counts the grant kept as late as any file could.
     */
    @Test
    void aReaderReadsOnlyWhatItAsksAfterAndNoMoreThanItHasTimeFor() throws Exception {
        StringBuilder text = new StringBuilder("{\"renewedAt\":\"2026-12-01T10:00:00.000Z\",\"ttlMillis\":3000,\"grants\":{");
        int blocks = 17; // 131,072 names of "Aa" and "BB" (one hash), 5 MB: copied into a map, a minute and more
        for (int i = 0; i < 1 << blocks; i++) {
            text.append('"');
            for (int b = 0; b < blocks; b++) {
                text.append((i >> b & 1) == 0 ? "Aa" : "BB");
            }
            text.append("\":1,");
        }
        byte[] planted = bytes(text.append("\"build\":2}}").toString());
        assertThat(planted.length).isLessThanOrEqualTo(SessionFile.MAX_BYTES);
        Path file = dir.resolve(".session.1-1.aa");
        Files.write(file, planted);
        Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.from(AT));
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(dev.proclive.Eventually.scaled(Duration.ofSeconds(20)), () -> {
            assertThat(SessionFiles.parse(planted, "build"::equals)).get()
                    .satisfies(r -> assertThat(r.grants()).isEqualTo(Map.of("build", 2L)));
            assertThat(SessionFiles.parse(planted, name -> false)).get().satisfies(r -> assertThat(r.grants()).isEmpty());
            assertThat(SessionFiles.renewedAt(dir, "build", 2, NOW, Optional.empty(), FILES)).as("read").contains(AT);
            assertThat(SessionFiles.renewedAt(dir, "build", 9, NOW, Optional.empty(), FILES)).as("another fence").isEmpty();
        });
        assertThat(SessionFiles.renewedAt(dir, "build", 9, NOW, Optional.empty(), FILES, System.nanoTime() - 1))
                .as("no time to read: kept a minute from now, as late as a file could say").contains(NOW.plus(SessionFiles.SKEW));
    }

    /**
     * A time ahead in a file (planted by another user of a shared directory) counts no later than a
     * minute past when the file last changed, which its writer cannot set: it holds an UNKNOWN holder's
     * lease a minute and a TTL past its last write at most, not for as long as it stands; and its
     * writer proven DEAD, it is removed after that.
     */
    @Test
    void aTimeAheadCountsNoLaterThanAMinutePastTheFilesLastChange() throws Exception {
        Path planted = dir.resolve(".session.99999-1.0123456789abcdef");
        Files.writeString(planted, "{\"renewedAt\":\"2099-01-01T00:00:00.000Z\",\"ttlMillis\":3000,\"grants\":{\"build\":2}}");
        Instant written = Instant.now();
        Instant later = written.plus(Duration.ofMinutes(10)); // read ten minutes on
        Optional<Instant> at = SessionFiles.renewedAt(dir, "build", 2, later, Optional.empty(), FILES);
        assertThat(at).isPresent();
        assertThat(at.get()).as("a minute past its last change, not past the reader's now")
                .isBefore(written.plus(SessionFiles.SKEW).plusSeconds(5));
        SessionFiles.clean(dir, id -> true, fsAt(later), FILES, unbounded());
        assertThat(planted).as("its writer DEAD, past a minute and its TTL from its last change").doesNotExist();
    }

    /**
     * A time behind when the file last changed (its writer's clock behind) counts from that change
     * where the file system's clock is known against the reader's: the writer renewed no earlier.
     */
    @Test
    void aTimeBehindTheFilesLastChangeCountsFromThatChange() throws Exception {
        Instant before = Instant.now().minusSeconds(1); // a change time is stamped by a coarse clock
        Instant behind = before.minusSeconds(40).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        Files.writeString(dir.resolve(".session.1-1.aa"), "{\"renewedAt\":\"" + Records.timestamp(behind)
                + "\",\"ttlMillis\":3000,\"grants\":{\"build\":3}}");
        Instant now = Instant.now();
        assertThat(SessionFiles.renewedAt(dir, "build", 3, now, Optional.of(Duration.ZERO), FILES).orElseThrow())
                .as("from its change").isAfter(before).isBeforeOrEqualTo(now.plusSeconds(1));
        assertThat(SessionFiles.renewedAt(dir, "build", 3, now, Optional.of(Duration.ofSeconds(5)), FILES).orElseThrow())
                .as("the file system's clock five seconds ahead").isAfter(before.minusSeconds(5))
                .isBeforeOrEqualTo(now.minusSeconds(4));
        assertThat(SessionFiles.renewedAt(dir, "build", 3, now, Optional.empty(), FILES))
                .as("where that clock is not known, as written").contains(behind);
    }

    @Test
    void timesNoRecordCanHoldAreNoSessionFilesAndNeitherReadingNorCleaningThrows() throws Exception {
        String last = "{\"renewedAt\":\"+1000000000-12-31T23:59:59.999999999Z\",\"ttlMillis\":3000,\"grants\":{\"build\":3}}";
        String first = "{\"renewedAt\":\"-1000000000-01-01T00:00:00Z\",\"ttlMillis\":3000,\"grants\":{\"build\":3}}";
        assertThat(parse(bytes(last))).as("after the year 9999").isEmpty();
        assertThat(parse(bytes(first))).as("before the year 0").isEmpty();
        Path late = dir.resolve(".session.1-1.aa");
        Path early = dir.resolve(".session.2-2.bb");
        Files.writeString(late, last);
        Files.writeString(early, first);
        assertThat(SessionFiles.renewedAt(dir, "build", 3, NOW, Optional.empty(), FILES)).as("they keep nothing fresh").isEmpty();
        SessionFiles.clean(dir, id -> true, fsAt(Instant.now()), FILES, unbounded()); // a dead writer's: no time can be added to it
        assertThat(late).as("written just now").exists();
        SessionFiles.clean(dir, id -> true, fsAt(Instant.now().plus(Duration.ofHours(2))), FILES, unbounded());
        assertThat(late).as("bytes that are no session file's, an hour old").doesNotExist();
        assertThat(early).doesNotExist();
    }

    @Test
    void aGrantKeptWithAShorterTtlIsNamedWithinAThirdOfItNotAtTheWriteSetForTheLongerOne() throws Exception {
        java.util.List<String> written = new java.util.concurrent.CopyOnWriteArrayList<>();
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""),
                (file, bytes) -> written.add(new String(bytes, StandardCharsets.UTF_8)));
        try {
            session.keep("slow", 1, Duration.ofMinutes(30), Instant.now()); // its first write set ten minutes from now
            session.keep("fast", 1, Duration.ofSeconds(3), Instant.now()); // fresh only 3 s past its grant unless named
            dev.proclive.Eventually.until("a write naming the grant of 3 s", Duration.ofSeconds(10),
                    () -> written.stream().anyMatch(text -> text.contains("\"fast\":1")));
            assertThat(session.unconfirmed("fast", 1)).isFalse();
        } finally {
            session.close();
        }
    }

    @Test
    void anUnreadableFileNamesEveryGrantAsOfItsModificationAMinuteAheadAtMost() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(!"root".equals(System.getProperty("user.name")),
                "root reads every file: an unreadable one needs a normal user");
        Path other = dir.resolve(".session.7-7.ee");
        Files.writeString(other, "{}");
        unreadableAt(other, AT);
        assertThat(SessionFiles.renewedAt(dir, "anything", 9, NOW, Optional.empty(), FILES)).as("another keeper's promise it cannot read").contains(AT);

        unreadableAt(other, NOW.plus(Duration.ofDays(365)));
        assertThat(SessionFiles.renewedAt(dir, "anything", 9, NOW, Optional.empty(), FILES)).as("a time no writer wrote it at: no later than a minute on")
                .contains(NOW.plus(SessionFiles.SKEW));
        unreadableAt(other, NOW.plusSeconds(30));
        assertThat(SessionFiles.renewedAt(dir, "anything", 9, NOW, Optional.empty(), FILES)).as("a clock a little ahead").contains(NOW.plusSeconds(30));
    }

    @Test
    void aGrantTakenUpLateIsNamedAtOnceNotAThirdOfItsTtlFromNow() throws Exception {
        java.util.List<String> written = new java.util.concurrent.CopyOnWriteArrayList<>();
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""),
                (file, bytes) -> written.add(new String(bytes, StandardCharsets.UTF_8)));
        try {
            long start = System.nanoTime();
            // a keeper takes up a grant whose record was written 25 s into its 30 s
            session.keep("old", 4, Duration.ofSeconds(30), Instant.now().minusSeconds(25));
            dev.proclive.Eventually.until("a write naming it", Duration.ofSeconds(30),
                    () -> written.stream().anyMatch(text -> text.contains("\"old\":4")));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("named before its record goes stale")
                    .isLessThan(Duration.ofSeconds(5));
        } finally {
            session.close();
        }
    }

    @Test
    void aWriteThatLandsAfterThreeQuartersOfTheTtlConfirmsNothing() throws Exception {
        java.util.concurrent.CountDownLatch landed = new java.util.concurrent.CountDownLatch(1);
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""), (file, bytes) -> {
            try {
                Thread.sleep(1500); // time itself is tested: a write slower than the whole TTL of 400 ms
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            landed.countDown();
        });
        try {
            session.keep("build", 1, Duration.ofMillis(400), Instant.now());
            assertThat(landed.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            dev.proclive.Eventually.until("the late write's end counted", Duration.ofSeconds(10),
                    () -> session.unconfirmed("build", 1));
            assertThat(session.confirmed("build", 1)).as("a newcomer may have judged it stale before it landed").isEmpty();
        } finally {
            session.close();
        }
    }

    /**
     * A grant kept again with another TTL while a write naming it is under way: what that write
     * finds when it lands (here: too late, so the grant lapsed for good) is the grant's, not lost
     * with the value the new TTL replaced.
     */
    @Test
    void aTtlChangedWhileALateWriteIsUnderWayKeepsTheLapse() throws Exception {
        java.util.concurrent.atomic.AtomicInteger writes = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch landed = new java.util.concurrent.CountDownLatch(1);
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""), (file, bytes) -> {
            if (writes.incrementAndGet() == 2) { // the first write confirms the grant; the second is slow
                writing.countDown();
                try {
                    go.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                landed.countDown();
            }
        });
        try {
            // a TTL of 2.4 s: the first write, due at 0.8 s, confirms unless it lands 1.8 s late
            session.keep("build", 1, Duration.ofMillis(2400), Instant.now());
            assertThat(writing.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(session.confirmed("build", 1)).as("named by the first write").isPresent();
            // lease renew --ttl 600 meanwhile, read with a renewedAt before the first write's (a renewal that
            // confirms it anew is another case: a newcomer judges by it)
            session.keep("build", 1, Duration.ofMinutes(10), Instant.now().minusSeconds(5));
            Thread.sleep(2000); // the slow write then lands after 3/4 of the 2.4 s it was written for
            go.countDown();
            assertThat(landed.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            dev.proclive.Eventually.until("the late write's end counted for the grant as it is kept now",
                    Duration.ofSeconds(10), () -> session.unconfirmed("build", 1));
            assertThat(session.confirmed("build", 1)).as("a newcomer may have judged it stale before it landed")
                    .isEmpty();
        } finally {
            go.countDown();
            session.close();
        }
    }

    @Test
    void aTtlShortenedByARenewalIsWhatTheGrantIsKeptBy() throws Exception {
        java.util.List<String> written = new java.util.concurrent.CopyOnWriteArrayList<>();
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""),
                (file, bytes) -> written.add(new String(bytes, StandardCharsets.UTF_8)));
        try {
            session.keep("build", 1, Duration.ofMinutes(30), Instant.now());
            session.keep("build", 1, Duration.ofSeconds(3), Instant.now()); // lease renew --ttl 3
            assertThat(session.ttlNanos("build", 1)).hasValue(Duration.ofSeconds(3).toNanos());
            dev.proclive.Eventually.until("named within a third of the 3 s", Duration.ofSeconds(10),
                    () -> written.stream().anyMatch(text -> text.contains("\"build\":1")));
        } finally {
            session.close();
        }
    }

    @Test
    void theLastGrantDroppedWhileAWriteIsUnderWayIsNamedNoLonger() throws Exception {
        java.util.List<String> written = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""), (file, bytes) -> {
            writing.countDown();
            try {
                go.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            written.add(new String(bytes, StandardCharsets.UTF_8));
        });
        try {
            session.keep("build", 1, Duration.ofMillis(300), Instant.now());
            assertThat(writing.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            session.drop("build", 1); // while the write naming it is under way
            go.countDown();
            dev.proclive.Eventually.until("a write after it that names nothing", Duration.ofSeconds(10),
                    () -> written.size() >= 2 && !written.get(written.size() - 1).contains("\"build\""));
        } finally {
            go.countDown();
            session.close();
        }
    }

    /**
     * Once {@code close} returns, the file is not written any more: a write under way has landed
     * first, so a directory deleted just after (a test's, a user's) sees no file appear in it.
     */
    @Test
    void closeReturnsOnceAWriteUnderWayHasLanded() throws Exception {
        java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean landed = new java.util.concurrent.atomic.AtomicBoolean();
        SessionFile session = new SessionFile(dir, new Identity(1, "1", "", "", "", ""), (file, bytes) -> {
            writing.countDown();
            long until = System.nanoTime() + Duration.ofMillis(300).toNanos();
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait(); // a write an interrupt does not cut short, as a move or a force
            }
            landed.set(true);
        });
        session.keep("build", 1, Duration.ofMillis(300), Instant.now());
        assertThat(writing.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        session.close();
        assertThat(landed).as("landed before close returned").isTrue();
    }

    /** Makes {@code file} unreadable to its owner, last modified at {@code at}. */
    private static void unreadableAt(Path file, Instant at) throws java.io.IOException {
        Files.setPosixFilePermissions(file, java.util.Set.of(java.nio.file.attribute.PosixFilePermission.OWNER_WRITE,
                java.nio.file.attribute.PosixFilePermission.OWNER_READ));
        Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.from(at));
        Files.setPosixFilePermissions(file, java.util.Set.of());
    }
}
