package dev.proclive.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The highest revision this user's clients saw of each etcd cluster, kept on disk between
 * processes: etcd's revisions only grow, so a client that reaches a cluster below the mark reaches
 * one restored from an older copy of its data (or wiped), whose fences would repeat ones already
 * handed out, also when the client itself was started after the restore.
 *
 * <p>One file per cluster, {@code etcd-CLUSTERID}, holding the revision: in
 * {@code $PROCLIVE_STATE_DIR} where that is an absolute path, and nowhere otherwise (a cluster
 * wiped and made again with the same member names and peer addresses has the same id, and every
 * call to it would be refused until the mark was deleted). The directory is made owner-only; one
 * that is a link, another user's, or writable by others is not used. A mark is written when the
 * first answer raises it, then at most once a second, and when the client closes; by a temporary
 * file renamed over it (a link in its place is replaced, never followed), and never lowered: a
 * writer reads it again after its rename and writes once more if another wrote a lower one
 * meanwhile. Best effort: nothing here ever fails a call of the store. Thread-safe. Only revisions
 * count, never a clock.
 */
public final class RevisionMarks {

    /** The variable that names the state directory ({@code off}: none). */
    public static final String STATE_DIR = "PROCLIVE_STATE_DIR";

    /** An etcd cluster id as the JSON gateway writes it: a decimal 64-bit number. */
    private static final Pattern CLUSTER = Pattern.compile("[0-9]{1,20}");
    private static final String PREFIX = "etcd-";
    private static final long WRITE_EVERY = TimeUnit.SECONDS.toNanos(1);

    private final Optional<Path> dir;
    /** Whether {@link #dir} was found usable: null until first looked at. */
    private Boolean usable;
    /** By cluster: the highest revision handed to {@link #saw}, and the highest written. */
    private final Map<String, Long> seen = new HashMap<>();
    private final Map<String, Long> written = new HashMap<>();
    private long wroteAt;
    private boolean writing;
    private boolean flushScheduled;
    /** Run while marks are written, outside the lock (tests: an answer that comes meanwhile). */
    private volatile Runnable whileWriting = () -> { };

    private RevisionMarks(Optional<Path> dir) {
        this.dir = dir;
    }

    /** Marks kept in {@code dir} (made owner-only if missing). */
    public static RevisionMarks in(Path dir) {
        return new RevisionMarks(Optional.of(Objects.requireNonNull(dir, "dir").toAbsolutePath()));
    }

    /** No marks: a client compares only with what it saw itself. */
    public static RevisionMarks none() {
        return new RevisionMarks(Optional.empty());
    }

    /** This user's marks, where its environment says (see the class comment). */
    public static RevisionMarks forUser() {
        return new RevisionMarks(userDirectory(System.getenv()));
    }

    /** The directory of this user's marks, from its environment; empty for none. */
    static Optional<Path> userDirectory(Map<String, String> env) {
        try {
            return Optional.ofNullable(env.get(STATE_DIR)).map(Path::of).filter(Path::isAbsolute);
        } catch (RuntimeException notAPath) {
            return Optional.empty();
        }
    }

    /** Where the mark of {@code cluster} is kept, if marks are kept. */
    public Optional<Path> file(String cluster) {
        return dir.filter(d -> CLUSTER.matcher(cluster).matches()).map(d -> d.resolve(PREFIX + cluster));
    }

    /** The mark of every cluster, as it is on disk now (nothing where none can be read). */
    public Map<String, Long> all() {
        Map<String, Long> marks = new HashMap<>();
        Optional<Path> d = usable();
        if (d.isEmpty()) {
            return marks;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(d.get(), PREFIX + "*")) {
            for (Path f : files) {
                String cluster = f.getFileName().toString().substring(PREFIX.length());
                long at = CLUSTER.matcher(cluster).matches() ? read(f) : 0;
                if (at > 0) {
                    marks.put(cluster, at);
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: what was read so far
        }
        return marks;
    }

    /** The mark of {@code cluster} as it is on disk now: 0 where there is none, or it cannot be read. */
    public long mark(String cluster) {
        Optional<Path> f = file(cluster);
        return f.isPresent() && usable().isPresent() ? read(f.get()) : 0;
    }

    /** A key-value answer of {@code cluster} was at {@code revision}: its mark is raised, soon. */
    public void saw(String cluster, long revision) {
        if (dir.isEmpty() || !CLUSTER.matcher(cluster).matches() || revision <= 0) {
            return;
        }
        synchronized (this) {
            if (seen.getOrDefault(cluster, 0L) >= revision) {
                return;
            }
            seen.put(cluster, revision);
            if (!writing) { // else the write under way sets the next one
                scheduleFlush();
            }
        }
    }

    /** Sets a flush a second after the last write (at once before the first), unless one is set. */
    private void scheduleFlush() {
        assert Thread.holdsLock(this);
        if (flushScheduled) {
            return;
        }
        long wait = wroteAt == 0 ? 0 : wroteAt + WRITE_EVERY - System.nanoTime();
        flushScheduled = true;
        // off the caller's thread, also when due now: a slow home never slows a call
        CompletableFuture.delayedExecutor(Math.max(0, wait), TimeUnit.NANOSECONDS).execute(this::flush);
    }

    /** Runs {@code r} while marks are written, outside the lock: for tests. */
    void whileWriting(Runnable r) {
        this.whileWriting = r;
    }

    /** Writes every mark raised since the last write, now. */
    public void flush() {
        Map<String, Long> due = new HashMap<>();
        synchronized (this) {
            flushScheduled = false;
            while (writing) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            seen.entrySet().stream().filter(e -> written.getOrDefault(e.getKey(), 0L) < e.getValue())
                    .forEach(e -> due.put(e.getKey(), e.getValue()));
            if (due.isEmpty()) {
                return;
            }
            writing = true;
            wroteAt = System.nanoTime();
        }
        try {
            whileWriting.run();
            Optional<Path> d = usable();
            if (d.isPresent()) {
                due.forEach((c, r) -> raise(d.get(), c, r));
            }
        } finally {
            synchronized (this) {
                due.forEach((c, r) -> written.merge(c, r, Math::max));
                writing = false;
                notifyAll();
                // a mark raised during this write: written a second after it, not at the next raise or close
                if (seen.entrySet().stream().anyMatch(e -> written.getOrDefault(e.getKey(), 0L) < e.getValue())) {
                    scheduleFlush();
                }
            }
        }
    }

    /** Raises the mark of {@code cluster} in {@code d} to {@code revision}, never lowering it. */
    private static void raise(Path d, String cluster, long revision) {
        Path target = d.resolve(PREFIX + cluster);
        for (int tries = 0; tries < 5 && read(target) < revision; tries++) {
            Path temporary = null;
            try {
                temporary = Files.createTempFile(d, "." + PREFIX + cluster, ".tmp"); // O_EXCL, owner-only
                Files.write(temporary, (revision + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS);
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                temporary = null;
            } catch (IOException | RuntimeException e) {
                return; // best effort
            } finally {
                if (temporary != null) {
                    try {
                        Files.deleteIfExists(temporary);
                    } catch (IOException | RuntimeException e) {
                        // left behind: a dot file nothing reads
                    }
                }
            }
        }
    }

    /** The revision in {@code f} (never through a link): 0 where it is missing or not a number. */
    private static long read(Path f) {
        try (InputStream in = Files.newInputStream(f, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            String text = new String(in.readNBytes(32), StandardCharsets.UTF_8).strip();
            return text.matches("[0-9]{1,18}") ? Long.parseLong(text) : 0;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /**
     * The directory, made if missing, where it is this user's own and only theirs (not a link, not
     * writable by others); empty otherwise. Looked at once.
     */
    private synchronized Optional<Path> usable() {
        if (usable == null) {
            usable = dir.isPresent() && ours(dir.get());
        }
        return usable ? dir : Optional.empty();
    }

    private static boolean ours(Path d) {
        try {
            if (!Files.exists(d, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            PosixFileAttributes a = Files.readAttributes(d, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            Set<PosixFilePermission> p = a.permissions();
            if (!a.isDirectory() || p.contains(PosixFilePermission.GROUP_WRITE) || p.contains(PosixFilePermission.OTHERS_WRITE)) {
                return false;
            }
            Path probe = Files.createTempFile(d, ".probe", ".tmp"); // made by this process: its owner is this user
            try {
                return Files.getAttribute(probe, "unix:uid", LinkOption.NOFOLLOW_LINKS)
                        .equals(Files.getAttribute(d, "unix:uid", LinkOption.NOFOLLOW_LINKS));
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException | RuntimeException e) {
            return false; // not POSIX, not writable, not there: no marks
        }
    }
}
