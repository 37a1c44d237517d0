package dev.proclive.lease.files;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.proclive.Identity;
import dev.proclive.lease.book.Records;
import dev.proclive.lease.book.Rounds;
import dev.proclive.spi.internal.FileLocker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Keeps a directory store's grants fresh without rewriting them, as an etcd lease does: one file per
 * store, written every third of the shortest TTL, naming each grant, so a thousand grants cost one
 * forced write a period. A record is fresh a TTL past the later of its own {@code renewedAt} and that
 * of the newest session file naming it; a store that ends leaves its file, as a last renewal.
 */
final class SessionFile {

    static final String PREFIX = ".session.";
    /** The lease part of a session file's temporary name: removed, as a record's are, once its writer is DEAD. */
    static final String TEMPORARY = "session";
    /** The most a session file may hold (a write past it fails; a reader reads no more): 400,000 grants of the longest names. */
    private static final int MAX_BYTES = 64 << 20;
    private static final JsonFactory JSON = new JsonFactory();
    /** How far ahead of a reader's clock a session file's time is believed (a writer's clock a little ahead). */
    static final Duration SKEW = Duration.ofMinutes(1);
    static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    /** Writes {@code bytes} over {@code file} atomically and forced, as the store writes a record. */
    interface Writer {
        void write(Path file, byte[] bytes) throws IOException;
    }

    /** {@code confirmedAt} ({@link System#nanoTime()}): its record's {@code renewedAt}, then each in-time write's start. */
    private static final class Kept {
        final long fence;
        final long ttlMillis;
        volatile long confirmedAt;
        /** Whether a write of this file has named it yet (else it is fresh by its record alone). */
        volatile boolean named;
        volatile boolean lapsed;

        Kept(long fence, long ttlMillis, long confirmedAt) {
            this.fence = fence;
            this.ttlMillis = ttlMillis;
            this.confirmedAt = confirmedAt;
        }

        long ttlNanos() {
            return TimeUnit.MILLISECONDS.toNanos(ttlMillis);
        }

        long deadline() {
            return confirmedAt + ttlNanos() / 4 * 3;
        }

        long due() {
            return confirmedAt + ttlNanos() / 3;
        }
    }

    private final Path file;
    private final Writer writer;
    private volatile Clock clock = Clock.systemUTC();
    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    /** Whether a write went through: from then on the file is written again when what it names changes. */
    private volatile boolean written;
    /** Counts the changes of what is kept: a write that began before the last one is followed by another. */
    private final AtomicLong changes = new AtomicLong();
    private volatile long changesSeen;
    private volatile boolean failed;
    private final Rounds writes = new Rounds("proclive-lease-session", this::writeNow, this::nextWrite);

    SessionFile(Path dir, Identity process, Writer writer) {
        // tells apart the files of one process's stores; no secret
        String random = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        this.file = dir.resolve(PREFIX + process.pid() + "-" + process.start() + "." + random);
        this.writer = writer;
    }

    /** The clock that stamps each write's {@code renewedAt}: the store's, which newcomers judge by. */
    void clock(Clock c) {
        this.clock = c;
    }

    /**
     * {@link System#nanoTime()} as of {@code renewedAt} on {@code clock}, which newcomers judge a grant
     * by: no later than now, no earlier than {@code ttl} ago.
     */
    static long nanosAsOf(Instant renewedAt, Duration ttl, Clock clock) {
        long ageMillis = Math.max(0, Math.min(ttl.toMillis(), clock.millis() - renewedAt.toEpochMilli()));
        return System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(ageMillis);
    }

    /** Named by a third of the TTL after {@code renewedAt}; kept again with another TTL, that one counts from now. */
    void keep(String name, long fence, Duration ttl, Instant renewedAt) {
        long ttlMillis = Math.max(1, ttl.toMillis());
        long asOfRenewal = nanosAsOf(renewedAt, Duration.ofMillis(ttlMillis), clock);
        Kept[] made = new Kept[1];
        // in one step with a write's confirmation or lapse of the grant (writeNow): neither is lost
        kept.compute(name, (n, before) -> {
            if (before == null || before.fence != fence) {
                return made[0] = new Kept(fence, ttlMillis, asOfRenewal);
            }
            if (before.ttlMillis == ttlMillis) {
                return before;
            }
            made[0] = new Kept(fence, ttlMillis, before.confirmedAt);
            made[0].named = before.named;
            made[0].lapsed = before.lapsed;
            return made[0];
        });
        if (made[0] != null) {
            changes.incrementAndGet();
            writes.by(made[0].due());
        }
    }

    void drop(String name, long fence) {
        boolean[] dropped = new boolean[1];
        kept.computeIfPresent(name, (n, k) -> {
            dropped[0] = k.fence == fence;
            return dropped[0] ? null : k; // in one step: a keep() of the same grant meanwhile is dropped too
        });
        if (dropped[0]) {
            changes.incrementAndGet();
            if (written) {
                writes.in(TimeUnit.MILLISECONDS.toNanos(period())); // written once more, naming only what is kept
            }
        }
    }

    private Kept kept(String name, long fence) {
        Kept k = kept.get(name);
        return k != null && k.fence == fence ? k : null;
    }

    /** When a write last named the grant in time ({@link System#nanoTime()}); empty when none did, or it lapsed. */
    OptionalLong confirmed(String name, long fence) {
        Kept k = kept(name, fence);
        return k == null || !k.named || k.lapsed ? OptionalLong.empty() : OptionalLong.of(k.confirmedAt);
    }

    OptionalLong ttlNanos(String name, long fence) {
        Kept k = kept(name, fence);
        return k == null ? OptionalLong.empty() : OptionalLong.of(k.ttlNanos());
    }

    /** Whether the grant, kept here, went unconfirmed for three quarters of its TTL; false where not kept here. */
    boolean unconfirmed(String name, long fence) {
        Kept k = kept(name, fence);
        return k != null && (k.lapsed || System.nanoTime() - k.deadline() > 0);
    }

    private long period() {
        OptionalLong shortest = kept.values().stream().mapToLong(k -> k.ttlMillis).min();
        return shortest.isEmpty() ? 1000 : Math.max(10, shortest.getAsLong() / 3);
    }

    private void writeNow() {
        changesSeen = changes.get();
        Map<String, Kept> named = new HashMap<>(kept);
        failed = false;
        try {
            if (!named.isEmpty() || written) {
                long start = System.nanoTime();
                byte[] bytes = json(named, clock.instant());
                if (bytes.length > MAX_BYTES) {
                    throw new IOException("the session file would hold " + bytes.length + " bytes, more than a reader reads");
                }
                writer.write(file, bytes);
                long end = System.nanoTime();
                written = true;
                for (Map.Entry<String, Kept> e : named.entrySet()) {
                    Kept asWritten = e.getValue();
                    // to the grant as it is kept now (kept again with another TTL meanwhile: by either TTL)
                    kept.computeIfPresent(e.getKey(), (n, k) -> {
                        if (k.fence != asWritten.fence) {
                            return k;
                        }
                        if (end - asWritten.deadline() > 0 || end - k.deadline() > 0) {
                            k.lapsed = true; // for good: a newcomer may have judged it stale meanwhile
                        } else if (!k.lapsed) {
                            k.confirmedAt = start;
                            k.named = true;
                        }
                        return k;
                    });
                }
            }
        } catch (IOException | UncheckedIOException e) {
            failed = true; // tried again soon: a grant unconfirmed for 3/4 of its TTL is lost
        }
    }

    private OptionalLong nextWrite() {
        boolean changed = changes.get() != changesSeen;
        if (kept.isEmpty() && !changed) {
            return OptionalLong.empty();
        }
        long now = System.nanoTime();
        if (failed) {
            return OptionalLong.of(now + TimeUnit.MILLISECONDS.toNanos(Math.max(100, Math.min(period(), 1000))));
        }
        long at = now + TimeUnit.MILLISECONDS.toNanos(changed ? Math.min(period(), 10) : period());
        for (Kept k : kept.values()) {
            long due = k.due();
            if (due - at < 0) {
                at = due - now < 0 ? now : due;
            }
        }
        return OptionalLong.of(at);
    }

    /** Waits for a write under way ({@link #CLOSE_WAIT} at most): a directory removed just after sees no file appear. */
    void close() {
        writes.close(CLOSE_WAIT); // a write hung past it (a file system that does not answer) is left
    }

    static byte[] json(Map<String, Kept> kept, Instant now) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("renewedAt", Records.timestamp(now));
            g.writeNumberField("ttlMillis", kept.values().stream().mapToLong(k -> k.ttlMillis).max().orElse(0));
            g.writeObjectFieldStart("grants");
            for (Map.Entry<String, Kept> e : new TreeMap<>(kept).entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue().fence);
            }
            g.writeEndObject();
            g.writeEndObject();
        }
        out.write('\n');
        return out.toByteArray();
    }

    record Read(Instant renewedAt, long ttlMillis, Map<String, Long> grants) {
    }

    /** Empty when not a session file's (a field twice or unknown, a time a record cannot hold). */
    static Optional<Read> parse(byte[] bytes) {
        try (JsonParser p = JSON.createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return Optional.empty();
            }
            Instant renewedAt = null;
            long ttl = -1;
            Map<String, Long> grants = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.getCurrentName();
                JsonToken t = p.nextToken();
                if (field.equals("renewedAt") && t == JsonToken.VALUE_STRING && renewedAt == null) {
                    renewedAt = Instant.parse(p.getText());
                } else if (field.equals("ttlMillis") && t == JsonToken.VALUE_NUMBER_INT && ttl < 0) {
                    ttl = p.getLongValue();
                } else if (field.equals("grants") && t == JsonToken.START_OBJECT && grants == null) {
                    grants = new HashMap<>();
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String name = p.getCurrentName();
                        if (p.nextToken() != JsonToken.VALUE_NUMBER_INT || grants.put(name, p.getLongValue()) != null) {
                            return Optional.empty();
                        }
                    }
                } else {
                    return Optional.empty();
                }
            }
            if (renewedAt == null || !Records.recordable(renewedAt) || ttl < 0 || grants == null
                    || p.nextToken() != null) {
                return Optional.empty();
            }
            return Optional.of(new Read(renewedAt, ttl, Map.copyOf(grants)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** No lock: each is replaced whole. A temporary file may start the same (a lease named {@code session}'s). */
    private static DirectoryStream<Path> list(Path dir) throws IOException {
        return Files.newDirectoryStream(dir, p -> isSessionFile(p.getFileName().toString()));
    }

    private static boolean isSessionFile(String fileName) {
        return fileName.startsWith(PREFIX) && !fileName.endsWith(".tmp");
    }

    /**
     * Empty where no session file names the grant. One this process may not read counts as naming it,
     * as of its mtime: a newcomer never takes a lease a keeper it cannot read may have promised. A time
     * past {@code now}, or past when the file last changed, plus {@link #SKEW} is capped there: such a
     * file (planted, or touched by hand) would otherwise hold what it names until then.
     */
    static Optional<Instant> renewedAt(Path dir, String name, long fence, Instant now, FileLocker files)
            throws IOException {
        Optional<Instant> latest = Optional.empty();
        try (DirectoryStream<Path> listed = list(dir)) {
            for (Path f : listed) {
                Optional<Instant> at = naming(f, name, fence, now, files);
                if (at.isPresent() && (latest.isEmpty() || at.get().isAfter(latest.get()))) {
                    latest = at;
                }
            }
        } catch (DirectoryIteratorException e) {
            throw e.getCause();
        }
        return latest;
    }

    private static Optional<Instant> naming(Path f, String name, long fence, Instant now, FileLocker files)
            throws IOException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
        if (!a.isRegularFile() || a.size() > MAX_BYTES) {
            return Optional.empty(); // not a session file: it keeps nothing fresh
        }
        Instant changed = changedAt(f, a);
        Instant latest = (changed.isBefore(now) ? changed : now).plus(SKEW);
        Optional<Instant> at;
        try {
            at = parse(read(f, files)).filter(r -> r.grants().getOrDefault(name, -1L) == fence).map(Read::renewedAt);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        } catch (AccessDeniedException denied) {
            at = Optional.of(a.lastModifiedTime().toInstant());
        }
        return at.map(t -> t.isAfter(latest) ? latest : t);
    }

    /**
     * Removes a proven DEAD writer's files past {@code renewedAt} plus TTL (unparsable: its last change
     * plus an hour), until {@code deadline} ({@link System#nanoTime()}).
     */
    static void clean(Path dir, Predicate<Identity> provenDead, Instant now, FileLocker files, long deadline)
            throws IOException {
        try (DirectoryStream<Path> listed = list(dir)) {
            for (Path f : listed) {
                if (System.nanoTime() - deadline > 0) {
                    return; // the rest at the next pass
                }
                Optional<Identity> by = writer(f.getFileName().toString());
                if (by.isEmpty() || !Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS) || !provenDead.test(by.get())) {
                    continue;
                }
                try {
                    Instant changed = changedAt(f, Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
                    Optional<Read> r = parse(read(f, files));
                    Instant believed = r.map(Read::renewedAt).filter(at -> at.isBefore(changed.plus(SKEW)))
                            .orElse(changed.plus(SKEW));
                    Instant until = r.isPresent() ? believed.plusMillis(r.get().ttlMillis()) : changed.plus(Duration.ofHours(1));
                    if (now.isAfter(until)) {
                        Files.deleteIfExists(f);
                    }
                } catch (IOException | UncheckedIOException e) {
                    // left for the next look
                }
            }
        } catch (DirectoryIteratorException e) {
            throw e.getCause();
        }
    }

    /**
     * When the file last changed: its ctime, which no user can set (its writer writes, then renames it
     * in); the mtime where no {@code unix} view tells (Windows).
     */
    private static Instant changedAt(Path f, BasicFileAttributes a) {
        try {
            return ((java.nio.file.attribute.FileTime) Files.getAttribute(f, "unix:ctime", LinkOption.NOFOLLOW_LINKS))
                    .toInstant();
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return a.lastModifiedTime().toInstant();
        }
    }

    /** Never following a link or waiting on a FIFO put in its place ({@link FileLocker#read}). */
    private static byte[] read(Path f, FileLocker files) throws IOException {
        try {
            return files.read(f, MAX_BYTES);
        } catch (NoSuchFileException | AccessDeniedException e) {
            throw e;
        } catch (FileSystemException e) {
            return new byte[0]; // a link in its place (ELOOP): no session file
        }
    }

    static Optional<Identity> writer(String fileName) {
        if (!isSessionFile(fileName)) {
            return Optional.empty();
        }
        String rest = fileName.substring(PREFIX.length());
        int dash = rest.indexOf('-');
        int dot = rest.lastIndexOf('.');
        if (dash <= 0 || dot <= dash) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Identity(Long.parseLong(rest.substring(0, dash)), rest.substring(dash + 1, dot),
                    "", "", "", ""));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
