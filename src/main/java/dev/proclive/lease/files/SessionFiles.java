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
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Every store's session files in a directory, as a newcomer and a cleaner read them: the newest that
 * names a grant, and a DEAD writer's removed once it keeps nothing fresh. {@link SessionFile} writes
 * one store's own.
 */
final class SessionFiles {

    /** How far ahead of a reader's clock a session file's time is believed (a writer's clock a little ahead). */
    static final Duration SKEW = Duration.ofMinutes(1);

    private SessionFiles() {
    }

    record Read(Instant renewedAt, long ttlMillis, Map<String, Long> grants) {
    }

    /** Empty when not a session file's (a field twice or unknown, a time a record cannot hold). */
    static Optional<Read> parse(byte[] bytes) {
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
        return fileName.startsWith(SessionFile.PREFIX) && !fileName.endsWith(".tmp");
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
        if (!a.isRegularFile() || a.size() > SessionFile.MAX_BYTES) {
            return Optional.empty(); // not a session file: it keeps nothing fresh
        }
        Instant changed = changedAt(f, a);
        Optional<Instant> at;
        try {
            at = parse(read(f, files)).filter(r -> r.grants().getOrDefault(name, -1L) == fence).map(Read::renewedAt);
        } catch (NoSuchFileException gone) {
            return Optional.empty();
        } catch (AccessDeniedException denied) {
            at = Optional.of(a.lastModifiedTime().toInstant());
        }
        return at.map(t -> capped(t, changed, now));
    }

    /** {@code at}, no later than {@link #SKEW} past {@code changed} or {@code now}, the sooner. */
    private static Instant capped(Instant at, Instant changed, Instant now) {
        Instant latest = (changed.isBefore(now) ? changed : now).plus(SKEW);
        return at.isAfter(latest) ? latest : at;
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
     * {@code renewedAt}, written in {@code file}, counted no later than {@link #SKEW} past when the file
     * last changed (or {@code now}, if sooner): a writer whose clock was ahead, or a hand, would
     * otherwise hold an UNKNOWN holder's lease off until then. As it is where the file cannot be read.
     */
    static Instant believed(Path file, Instant renewedAt, Instant now) {
        Instant changed;
        try {
            changed = changedAt(file, Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS));
        } catch (IOException e) {
            return renewedAt;
        }
        // on the clock of now: a store's may be set apart
        return capped(renewedAt, changed.plus(Duration.between(Instant.now(), now)), now);
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
