package dev.proclive.lease.files;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.proclive.Identity;
import dev.proclive.lease.book.Records;
import dev.proclive.lease.book.Rounds;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One file per store names each grant, written every third of the shortest TTL: grants stay fresh unrewritten, 1,000
 * for one forced write a period. A record is fresh a TTL past the later of its {@code renewedAt} and that of the newest
 * session file naming it ({@link SessionFiles}); an ended store's file stays, a last renewal.
 */
final class SessionFile {

    static final String PREFIX = ".session.";
    /** The lease part of a session file's temporary name: removed, as a record's are, once its writer is DEAD. */
    static final String TEMPORARY = "session";
    /**
     * A session file's cap (a write past it fails; a reader reads no more): 55,000 grants of the longest names. A reader
     * reads it under a lease's lock, which others wait 5 s for: a file at the cap takes a fraction of a second.
     */
    static final int MAX_BYTES = 8 << 20;
    /** Names not interned: each is read once, and interning a planted file of millions took seconds. */
    static final JsonFactory JSON = JsonFactory.builder().disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES).build();
    static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
    /** How soon a new grant is named: grants made meanwhile (a thousand in a burst) go in one write. */
    private static final long NAMED_WITHIN_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Writes {@code bytes} over {@code file} atomically and forced, as the store writes a record. */
    interface Writer {
        void write(Path file, byte[] bytes) throws IOException;
    }

    /** {@code confirmedAt} ({@link System#nanoTime}): record's {@code renewedAt}, then each timely write's start. */
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

    /** {@code nanoTime} at {@code renewedAt} on {@code clock}: no later than now, no earlier than {@code ttl} ago. */
    static long nanosAsOf(Instant renewedAt, Duration ttl, Clock clock) {
        long ageMillis = Math.max(0, Math.min(ttl.toMillis(), clock.millis() - renewedAt.toEpochMilli()));
        return System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(ageMillis);
    }

    /** Named by a third of the TTL after {@code renewedAt}; kept again with another TTL, that one counts from then. */
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
            // a renewal elsewhere confirms it as this file's writes do: judged by its TTL from then, not from before
            long confirmedAt = asOfRenewal - before.confirmedAt > 0 ? asOfRenewal : before.confirmedAt;
            made[0] = new Kept(fence, ttlMillis, confirmedAt);
            made[0].named = before.named;
            made[0].lapsed = before.lapsed;
            return made[0];
        });
        if (made[0] != null) {
            changes.incrementAndGet();
            // named soon, not a third of the TTL on: a newcomer whose clock is ahead of ours judges a grant by this
            // file's ctime, not the times in it. Not with a non-system clock (a test's): ctimes cannot follow it
            long soon = System.nanoTime() + NAMED_WITHIN_NANOS;
            boolean system = clock.withZone(java.time.ZoneOffset.UTC).equals(Clock.systemUTC());
            writes.by(!system || made[0].due() - soon < 0 ? made[0].due() : soon);
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
                        if (k.fence != asWritten.fence || k != asWritten && k.confirmedAt != asWritten.confirmedAt) {
                            return k; // another grant, or this one kept anew (written again) as this write went
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

    /** Waits up to {@link #CLOSE_WAIT} for a write under way: a directory removed just after sees no file appear. */
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
}
