package dev.proclive.lease.files;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.proclive.Identity;
import dev.proclive.lease.book.Daemons;
import dev.proclive.lease.book.Records;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * What keeps a directory store's grants fresh without rewriting them, as an etcd session keeps its
 * records: one file per store, {@code .session.PID-START.RANDOM}, written again every third of the
 * shortest TTL among the grants it keeps, naming each of them (lease and fence) and when it was
 * written. A granted record is fresh until its own {@code renewedAt} plus its TTL, or until the
 * {@code renewedAt} of the newest session file that names it plus its TTL, whichever is later: a
 * thousand grants kept cost one forced write a period, not a thousand. A store that ends (closed,
 * or its process killed) leaves its file, which keeps what it named fresh for one TTL more, as a
 * record's last renewal did; a dead writer's file past that is removed with the temporary files.
 */
final class SessionFile {

    /** The start of a session file's name; the rest is {@code PID-START.RANDOM}. */
    static final String PREFIX = ".session.";
    /** The lease part of a session file's temporary name: removed, as a record's are, once its writer is DEAD. */
    static final String TEMPORARY = "session";
    /** The most a session file may hold: a million grants' names, with room. */
    private static final int MAX_BYTES = 64 << 20;
    private static final JsonFactory JSON = new JsonFactory();
    /** How far ahead of a reader's clock an unreadable session file's modification time is still believed. */
    static final Duration SKEW = Duration.ofMinutes(1);
    /** The years a record's times can be in, 0000 to 9999: a TTL added to one never overflows an {@link Instant}. */
    private static final Instant EARLIEST = Instant.parse("0000-01-01T00:00:00Z");
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    /** Writes {@code bytes} over {@code file} atomically and forced, as the store writes a record. */
    interface Writer {
        void write(Path file, byte[] bytes) throws IOException;
    }

    /** A grant kept: its fence, its TTL, and when it was first kept here ({@link System#nanoTime()}). */
    private record Kept(long fence, long ttlMillis, long since) {
    }

    private final Path file;
    private final Writer writer;
    private volatile Clock clock = Clock.systemUTC();
    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    /** When the last write that went through began ({@link System#nanoTime()}); valid once {@link #written}. */
    private volatile long writtenAt;
    private volatile boolean written;
    private ScheduledExecutorService thread;
    private boolean scheduled;
    /** The next write set, and when it is due ({@link System#nanoTime()}), while {@link #scheduled}. */
    private java.util.concurrent.ScheduledFuture<?> next;
    private long nextAt;
    private boolean closed;

    SessionFile(Path dir, Identity process, Writer writer) {
        byte[] bits = new byte[8];
        new java.security.SecureRandom().nextBytes(bits);
        this.file = dir.resolve(PREFIX + process.pid() + "-" + process.start() + "." + HexFormat.of().formatHex(bits));
        this.writer = writer;
    }

    /** The clock that stamps each write's {@code renewedAt}: the store's, which newcomers judge by. */
    void clock(Clock c) {
        this.clock = c;
    }

    Path file() {
        return file;
    }

    /** Keeps the grant at {@code fence} of {@code name} fresh from now on, until {@link #drop dropped}. */
    void keep(String name, long fence, Duration ttl) {
        Kept before = kept.get(name);
        if (before != null && before.fence() == fence) {
            return;
        }
        kept.put(name, new Kept(fence, Math.max(1, ttl.toMillis()), System.nanoTime()));
        schedule();
    }

    /** No longer keeps the grant at {@code fence} of {@code name} (another fence's stays). */
    void drop(String name, long fence) {
        if (kept.computeIfPresent(name, (n, k) -> k.fence() == fence ? null : k) == null && written) {
            schedule(); // written once more, so that the file names only what is kept
        }
    }

    /**
     * When a write of this file last named the grant at {@code fence} of {@code name}
     * ({@link System#nanoTime()}); empty when none did since it was kept.
     */
    OptionalLong confirmed(String name, long fence) {
        Kept k = kept.get(name);
        long at = writtenAt;
        if (k == null || k.fence() != fence || !written || at - k.since() < 0) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(at);
    }

    /**
     * Whether the grant at {@code fence} of {@code name}, kept here, went unconfirmed: no write of
     * this file that named it went through for three quarters of its TTL since it was kept (or
     * since the last one that did). False where it is not kept here.
     */
    boolean unconfirmed(String name, long fence) {
        Kept k = kept.get(name);
        if (k == null || k.fence() != fence) {
            return false;
        }
        long last = k.since();
        long at = writtenAt;
        if (written && at - last > 0) {
            last = at;
        }
        return System.nanoTime() - last > TimeUnit.MILLISECONDS.toNanos(k.ttlMillis()) / 4 * 3;
    }

    /**
     * Sets the next write a period from now, unless one is set sooner: a grant kept with a shorter
     * TTL than those kept so far is named within a third of its own, not at the write set for theirs.
     */
    private synchronized void schedule() {
        if (closed) {
            return;
        }
        long period = period();
        if (scheduled && (nextAt - (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(period)) <= 0 || !next.cancel(false))) {
            return; // due soon enough, or being written now (the write after it is set by the shortest TTL then)
        }
        if (thread == null) {
            thread = Daemons.scheduler("proclive-lease-session");
        }
        setNext(period);
    }

    /** Sets the next write {@code period} ms from now; under this object's lock. */
    private void setNext(long period) {
        scheduled = true;
        nextAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(period);
        next = thread.schedule(Daemons.surviving(this::writeNow), period, TimeUnit.MILLISECONDS);
    }

    /** A third of the shortest TTL kept (10 ms at least), a second at most while writes fail. */
    private long period() {
        long shortest = Long.MAX_VALUE;
        for (Kept k : kept.values()) {
            shortest = Math.min(shortest, k.ttlMillis());
        }
        return shortest == Long.MAX_VALUE ? 1000 : Math.max(10, shortest / 3);
    }

    /** One write on the session thread, then the next one set while anything is kept; nothing written before a first grant. */
    private void writeNow() {
        boolean failed = false;
        try {
            if (!kept.isEmpty() || written) {
                long start = System.nanoTime();
                writer.write(file, json(kept, clock.instant()));
                writtenAt = start;
                written = true;
            }
        } catch (IOException | UncheckedIOException e) {
            failed = true; // tried again soon: a grant unconfirmed for 3/4 of its TTL is lost
        } finally {
            synchronized (this) {
                scheduled = false;
                if (!closed && !kept.isEmpty()) {
                    long period = period(); // the shortest TTL kept now, one kept during this write's too
                    setNext(failed ? Math.min(period, 1000) : period);
                }
            }
        }
    }

    /** Stops writing; the file stays, and what it names stays fresh for its TTL. */
    synchronized void close() {
        closed = true;
        if (thread != null) {
            thread.shutdownNow();
        }
    }

    static byte[] json(Map<String, Kept> kept, Instant now) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long longest = 0;
        for (Kept k : kept.values()) {
            longest = Math.max(longest, k.ttlMillis());
        }
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("renewedAt", Records.timestamp(now));
            g.writeNumberField("ttlMillis", longest);
            g.writeObjectFieldStart("grants");
            for (Map.Entry<String, Kept> e : new TreeMap<>(kept).entrySet()) {
                g.writeNumberField(e.getKey(), e.getValue().fence());
            }
            g.writeEndObject();
            g.writeEndObject();
        }
        out.write('\n');
        return out.toByteArray();
    }

    /** What one session file says: when it was written, its longest TTL, and the grants it names. */
    record Read(Instant renewedAt, long ttlMillis, Map<String, Long> grants) {
    }

    /** Reads one session file's bytes; empty when they are not one (a time outside the years a record can hold too). */
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
                    grants = new java.util.HashMap<>();
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String name = p.getCurrentName();
                        if (p.nextToken() != JsonToken.VALUE_NUMBER_INT || grants.put(name, p.getLongValue()) != null) {
                            return Optional.empty();
                        }
                    }
                } else {
                    return Optional.empty(); // a field twice, of another kind, or unknown
                }
            }
            if (renewedAt == null || renewedAt.isBefore(EARLIEST) || renewedAt.isAfter(LATEST) || ttl < 0 || grants == null
                    || p.nextToken() != null) {
                return Optional.empty();
            }
            return Optional.of(new Read(renewedAt, ttl, Map.copyOf(grants)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The session files of a directory (read with no lock: each is replaced whole). */
    static DirectoryStream<Path> list(Path dir) throws IOException {
        return Files.newDirectoryStream(dir, p -> isSessionFile(p.getFileName().toString()));
    }

    /**
     * Whether {@code fileName} is a session file's name: not a temporary file's, which may start
     * the same ({@code .session.PID-START.RANDOM.tmp}: one being written, or a lease named
     * {@code session}'s).
     */
    static boolean isSessionFile(String fileName) {
        return fileName.startsWith(PREFIX) && !fileName.endsWith(".tmp");
    }

    /**
     * The latest {@code renewedAt} of the session files of {@code dir} that name the grant at
     * {@code fence} of {@code name}: empty where none does. A session file this process may not
     * read is taken to name it, as last written when it was last modified: a newcomer never takes
     * a lease earlier than a keeper it cannot read may have promised. Unless that time is more than
     * {@link #SKEW} after {@code now}: no writer writes into the future, and such a file (one planted,
     * or touched by hand) would otherwise hold every lease of the directory until then, {@code break}
     * or not.
     */
    static Optional<Instant> renewedAt(Path dir, String name, long fence, Instant now) throws IOException {
        Optional<Instant> latest = Optional.empty();
        try (DirectoryStream<Path> files = list(dir)) {
            for (Path f : files) {
                Optional<Instant> at = naming(f, name, fence, now);
                if (at.isPresent() && (latest.isEmpty() || at.get().isAfter(latest.get()))) {
                    latest = at;
                }
            }
        } catch (DirectoryIteratorException e) {
            throw e.getCause();
        }
        return latest;
    }

    /** The {@code renewedAt} of session file {@code f} if it names the grant at {@code fence} of {@code name}. */
    private static Optional<Instant> naming(Path f, String name, long fence, Instant now) throws IOException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
        if (!a.isRegularFile() || a.size() > MAX_BYTES) {
            return Optional.empty(); // not a session file: it keeps nothing fresh
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(f);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        } catch (java.nio.file.AccessDeniedException denied) {
            Instant modified = a.lastModifiedTime().toInstant();
            return modified.isAfter(now.plus(SKEW)) ? Optional.empty() : Optional.of(modified);
        }
        return parse(bytes).filter(r -> r.grants().getOrDefault(name, -1L) == fence).map(Read::renewedAt);
    }

    /**
     * Removes the session files of {@code dir} whose writer is proven DEAD and which keep nothing
     * fresh any more: their {@code renewedAt} plus their longest TTL has passed (or they are no
     * session file's bytes and are a TTL of an hour old).
     */
    static void clean(Path dir, Predicate<Identity> provenDead, Instant now) throws IOException {
        try (DirectoryStream<Path> files = list(dir)) {
            for (Path f : files) {
                Optional<Identity> by = writer(f.getFileName().toString());
                if (by.isEmpty() || !Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS) || !provenDead.test(by.get())) {
                    continue;
                }
                try {
                    Optional<Read> r = Files.size(f) > MAX_BYTES ? Optional.empty() : parse(Files.readAllBytes(f));
                    Instant until = r.isPresent() ? r.get().renewedAt().plusMillis(r.get().ttlMillis())
                            : Files.getLastModifiedTime(f, LinkOption.NOFOLLOW_LINKS).toInstant().plus(Duration.ofHours(1));
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

    /** The process a session file's name says wrote it. */
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
            long pid = Long.parseLong(rest.substring(0, dash));
            return Optional.of(new Identity(pid, rest.substring(dash + 1, dot), "", "", "", ""));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
