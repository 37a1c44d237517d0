package dev.proclive.lease.files;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.proclive.Identity;
import dev.proclive.lease.book.Records;
import dev.proclive.spi.internal.FileLocker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Every store's session files, as newcomers and cleaners read them; {@link SessionFile} writes one store's own. */
final class SessionFiles {

    /** How far ahead of a reader's clock a session file's time is believed (a writer's clock a little ahead). */
    static final Duration SKEW = Duration.ofMinutes(1);

    /** The longest a newcomer reads session files, under the lease's lock (which others wait 5 s for at most). */
    static final long READ_BUDGET_NANOS = TimeUnit.SECONDS.toNanos(1);

    private SessionFiles() {
    }

    record Read(Instant renewedAt, long ttlMillis, Map<String, Long> grants) {
    }

    /**
     * {@link Read#grants} holding only the {@code wanted} names: a reader asks after one, a cleaner after none (a file
     * planted with millions, whose hashes run in a row, took minutes to copy into a map). A name named twice makes the
     * file none only if it is wanted.
     */
    static Optional<Read> parse(byte[] bytes, Predicate<String> wanted) {
        try (JsonParser p = SessionFile.JSON.createParser(bytes)) {
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
                        if (p.nextToken() != JsonToken.VALUE_NUMBER_INT
                                || wanted.test(name) && grants.put(name, p.getLongValue()) != null) {
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
            return Optional.of(new Read(renewedAt, ttl, Collections.unmodifiableMap(grants))); // not copied: see above
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** No lock: each is replaced whole. A temporary file may start the same (a lease named {@code session}'s). */
    private static DirectoryStream<Path> list(Path dir) throws IOException {
        return Files.newDirectoryStream(dir, p -> isSessionFile(p.getFileName().toString()));
    }

    private static boolean isSessionFile(String fileName) {
        return fileName.startsWith(SessionFile.PREFIX) && !fileName.endsWith(".tmp");
    }

    /**
     * Empty where no session file names the grant. One this process may not read names it as of its mtime: a newcomer
     * never takes what a keeper it cannot read may have promised. Each is {@link #believed}, {@code fsAhead} (how far
     * the file system's clock, which stamps changes, is ahead of {@code now}'s) giving it a floor. Past
     * {@link #READ_BUDGET_NANOS} no more is read, and the grant counts as renewed a minute from {@code now}: as late
     * as any file could say.
     */
    static Optional<Instant> renewedAt(Path dir, String name, long fence, Instant now, Optional<Duration> fsAhead,
                                       FileLocker files) throws IOException {
        return renewedAt(dir, name, fence, now, fsAhead, files, System.nanoTime() + READ_BUDGET_NANOS);
    }

    /** As above, with the budget's end as a {@link System#nanoTime} {@code deadline}. */
    static Optional<Instant> renewedAt(Path dir, String name, long fence, Instant now, Optional<Duration> fsAhead,
                                       FileLocker files, long deadline) throws IOException {
        Optional<Instant> latest = Optional.empty();
        try (DirectoryStream<Path> listed = list(dir)) {
            for (Path f : listed) {
                if (System.nanoTime() - deadline > 0) {
                    return Optional.of(now.plus(SKEW)); // the rest unread: what none of them could say later
                }
                Optional<Instant> at = naming(f, name, fence, now, fsAhead, files);
                if (at.isPresent() && (latest.isEmpty() || at.get().isAfter(latest.get()))) {
                    latest = at;
                }
            }
        } catch (DirectoryIteratorException e) {
            throw e.getCause();
        }
        return latest;
    }

    private static Optional<Instant> naming(Path f, String name, long fence, Instant now, Optional<Duration> fsAhead,
                                            FileLocker files) throws IOException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        }
        Instant changedOnFs = changedAt(f, a);
        if (!a.isRegularFile() || a.size() > SessionFile.MAX_BYTES || !Records.recordable(changedOnFs)) {
            return Optional.empty(); // not a session file (a change time set by hand, where it is the mtime): none
        }
        Instant changed = changedOnFs.minus(fsAhead.orElse(Duration.ZERO));
        Optional<Instant> at;
        try {
            at = parse(read(f, files), name::equals).filter(r -> r.grants().getOrDefault(name, -1L) == fence)
                    .map(Read::renewedAt);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        } catch (AccessDeniedException denied) {
            Instant modified = a.lastModifiedTime().toInstant(); // set by its owner: any time, kept in range
            at = Optional.of(Records.recordable(modified) ? modified.minus(fsAhead.orElse(Duration.ZERO)) : changed);
        }
        return at.map(t -> believed(t, changed, now, fsAhead.isPresent()));
    }

    /**
     * {@code at}, written in a file last changed at {@code changed}: at most {@link #SKEW} past the sooner of that
     * change and {@code now} (a writer's clock ahead, or a file planted or touched by hand, would hold its grants till
     * then); with {@code floor}, not before that change (a writer's clock behind would let a newcomer take them).
     */
    private static Instant believed(Instant at, Instant changed, Instant now, boolean floor) {
        Instant latest = (changed.isBefore(now) ? changed : now).plus(SKEW);
        Instant earliest = floor && changed.isAfter(at) ? changed : at;
        return earliest.isAfter(latest) ? latest : earliest;
    }

    /**
     * Removes proven DEAD writers' files once none keeps anything fresh: past a minute and its TTL from its last change
     * (unparsable: an hour), on the file system's clock, whatever time it holds: {@code fsNow} reads it (by making a
     * file), once and only if some file's writer is proven DEAD; where it cannot, every file is left for a pass that
     * can (judged by this process's clock, ahead, a file still kept would go). A writer is told by the file's name,
     * which says no PID namespace or host: one in another, judged DEAD wrongly, rewrites its file every third of the
     * shortest TTL it keeps, so it never loses it while it keeps it. Read
     * before its change time is taken (an open makes a network file system look again), so a version cached as older
     * than the one read removes nothing. The TTL is the file's (the longest its writer keeps); a record renewed
     * elsewhere with a longer one counts from that renewal by itself.
     */
    static void clean(Path dir, Predicate<Identity> provenDead, Supplier<Optional<Instant>> fsNow, FileLocker files,
                      long deadline) throws IOException {
        Optional<Instant> now = null;
        try (DirectoryStream<Path> listed = list(dir)) {
            for (Path f : listed) {
                if (System.nanoTime() - deadline > 0) {
                    return; // the rest at the next pass
                }
                Optional<Identity> by = writer(f.getFileName().toString());
                if (by.isEmpty() || !Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS) || !provenDead.test(by.get())) {
                    continue;
                }
                now = now == null ? fsNow.get() : now;
                if (now.isEmpty()) {
                    return;
                }
                try {
                    if (Duration.between(changedAt(f), now.get()).compareTo(SKEW) <= 0) {
                        continue; // changed within a minute: kept, unread
                    }
                    Duration keeps = parse(read(f, files), name -> false).map(r -> SKEW.plusMillis(r.ttlMillis()))
                            .orElse(Duration.ofHours(1));
                    if (Duration.between(changedAt(f), now.get()).compareTo(keeps) > 0) {
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
     * {@code renewedAt} as {@link #believed(Instant, Instant, Instant, boolean)} without floor (a holder's promise), or
     * as is if unreadable. Without {@code fsAhead} the change moves by {@code now}'s offset from the system's.
     */
    static Instant believed(Path file, Instant renewedAt, Instant now, Optional<Duration> fsAhead) {
        try {
            Instant changed = changedAt(file).minus(fsAhead.orElseGet(() -> Duration.between(now, Instant.now())));
            return believed(renewedAt, changed, now, false); // a record's own time counts as written (DESIGN)
        } catch (IOException e) {
            return renewedAt;
        }
    }

    static Instant changedAt(Path f) throws IOException {
        return changedAt(f, Files.readAttributes(f, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
    }

    /** Its ctime (no user can set it: written, then renamed in), on the file system's clock; the mtime on Windows. */
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
            return files.read(f, SessionFile.MAX_BYTES);
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
        String rest = fileName.substring(SessionFile.PREFIX.length());
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
