package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Verdict;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A directory of named single-writer leases, each held by a process identity.
 *
 * <pre>{@code
 * LeaseStore store = LeaseStore.open(Path.of(".state/leases"));
 * Identity owner = ProcLive.resolveOwner().orElseThrow();
 * if (store.acquire("build", owner) instanceof Acquisition.Granted granted) {
 *     try (Lease lease = granted.lease()) {
 *         writeWithFence(lease.fence());
 *     }
 * }
 * }</pre>
 *
 * <p>A lease is granted when it is free (no record, or a released one), again to the same holder
 * (same fence), and over a holder proven DEAD (exited, a zombie, its PID reused, the machine
 * rebooted) at once, with the old holder and the verdict kept in the record's {@code previous}.
 * It is never taken from an ALIVE holder. A holder whose liveness cannot be proven (UNKNOWN) keeps
 * it, unless the {@link LeasePolicy} takes UNKNOWN over and the record was not renewed for the TTL
 * it promised. Every new grant gets a fence one higher than any granted before, also after a
 * release, a {@link #breakLease break} or the record's deletion by hand.
 *
 * <p>Files in the directory: {@code NAME.lease}, the record, replaced atomically (a reader never
 * sees half a record, and a process killed at any step leaves the old record or the new one);
 * {@code NAME.guard}, never deleted, locked while a record is read, judged and replaced, and
 * holding the highest fence ever granted; {@code .NAME.PID-START.tmp}, a record being written by
 * that process, removed by a later writer once that process is proven DEAD. A directory the store
 * creates is owner-only (0700) and so are the files it writes there (0600); in an existing
 * directory files get the process's default permissions (its umask), so a hook and its agent
 * running as different users can share a group-writable one.
 *
 * <p>Judging and writing happen one process at a time: within a JVM under one lock per lease
 * file, across processes under the guard's {@link FileChannel#lock() file lock}, so a second taker
 * re-reads the first one's record. All of a JVM's work on a guard goes through this class: do not
 * open the guard files yourself, because closing any channel on a file drops every lock this JVM
 * holds on it (see {@link java.nio.channels.FileLock}). {@link #read} takes no lock and needs no
 * write access. Instances are thread-safe.
 */
public final class LeaseStore {

    /** 1 to 128 of {@code [A-Za-z0-9._-]}, not starting with {@code .} or {@code -}. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,127}");

    /** The largest record read: a record is a few hundred bytes. */
    private static final int MAX_RECORD_BYTES = 1 << 20;

    /** One lock per guard file in this JVM, whichever store asks. */
    private static final ConcurrentHashMap<Path, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private final Path dir;
    private final LeasePolicy policy;
    private final Identity writer;
    /** Whether this store created the directory: then its files are owner-only too. */
    private final boolean ownerOnly;

    private LeaseStore(Path dir, LeasePolicy policy, Identity writer, boolean ownerOnly) {
        this.dir = dir;
        this.policy = policy;
        this.writer = writer;
        this.ownerOnly = ownerOnly;
    }

    /** A store over {@code dir} with {@link LeasePolicy#defaults()}; see {@link #open(Path, LeasePolicy)}. */
    public static LeaseStore open(Path dir) throws IOException {
        return open(dir, LeasePolicy.defaults());
    }

    /**
     * A store over {@code dir}, created (owner-only, on POSIX) if it is missing.
     *
     * @throws NullPointerException if an argument is null
     * @throws NotDirectoryException if {@code dir} exists and is not a directory
     * @throws IOException           if it cannot be created or resolved
     */
    public static LeaseStore open(Path dir, LeasePolicy policy) throws IOException {
        Objects.requireNonNull(dir, "dir");
        Objects.requireNonNull(policy, "policy");
        boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
        boolean created = false;
        if (!Files.exists(dir)) {
            created = true;
            if (posix) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } else {
                Files.createDirectories(dir);
            }
        }
        if (!Files.isDirectory(dir)) {
            throw new NotDirectoryException(dir.toString());
        }
        Identity self = ProcLive.current().orElseGet(() -> new Identity(ProcessHandle.current().pid(), "", "", "", "", ""));
        return new LeaseStore(dir.toRealPath(), policy, self, posix && created);
    }

    /** The directory, resolved. */
    public Path directory() {
        return dir;
    }

    /** The policy acquisitions follow. */
    public LeasePolicy policy() {
        return policy;
    }

    /**
     * Takes lease {@code name} for {@code holder}, or tells why not.
     *
     * @param holder the process the lease is for; it need not be the calling one (a hook takes a
     *               lease for its owner), but it must be ALIVE now
     * @throws IllegalArgumentException if {@code name} is not a lease name, or {@code holder} is not ALIVE
     * @throws LeaseCorruptException    if the record or guard cannot be trusted; nothing is changed
     * @throws IOException              if the files cannot be read or written
     */
    public Acquisition acquire(String name, Identity holder) throws IOException {
        checkName(name);
        Objects.requireNonNull(holder, "holder");
        Verdict alive = ProcLive.explain(holder);
        if (alive.liveness() != Liveness.ALIVE) {
            throw new IllegalArgumentException("a lease is granted to a live process only; the holder is " + alive);
        }
        return locked(name, guard -> {
            Optional<LeaseRecord> current = readRecord(name);
            cleanTemporaryFiles(name);
            Instant now = now();
            if (current.isEmpty() || !current.get().held()) {
                return grant(name, guard, holder, current, Optional.empty(), now);
            }
            LeaseRecord record = current.get();
            if (sameProcess(record.holder(), holder)) {
                LeaseRecord again = new LeaseRecord(name, record.fence(), LeaseRecord.State.HELD, holder, writer,
                        record.acquiredAt(), now, policy.ttl(), record.previous());
                writeRecord(name, again);
                return new Acquisition.Granted(new Lease(this, again), current);
            }
            Verdict verdict = ProcLive.explain(record.holder());
            if (verdict.liveness() == Liveness.ALIVE) {
                return new Acquisition.Held(record, verdict);
            }
            if (verdict.liveness() == Liveness.UNKNOWN) {
                if (!policy.takeUnknownAfterTtl()) {
                    return new Acquisition.Undecided(record, verdict, Optional.empty());
                }
                if (now.isBefore(record.freshUntil())) {
                    return new Acquisition.Undecided(record, verdict, Optional.of(record.freshUntil()));
                }
            }
            LeaseRecord.Takeover takeover = new LeaseRecord.Takeover(record.fence(), record.holder(), verdict, now);
            return grant(name, guard, holder, current, Optional.of(takeover), now);
        });
    }

    /** A new grant: the fence one above any this lease ever had. */
    private Acquisition grant(String name, FileChannel guard, Identity holder, Optional<LeaseRecord> replaced,
                              Optional<LeaseRecord.Takeover> takeover, Instant now) throws IOException {
        long highest = Math.max(readGuardFence(name, guard), replaced.map(LeaseRecord::fence).orElse(0L));
        LeaseRecord granted = new LeaseRecord(name, highest + 1, LeaseRecord.State.HELD, holder, writer, now, now,
                policy.ttl(), takeover);
        writeRecord(name, granted);
        writeGuardFence(guard, granted.fence());
        return new Acquisition.Granted(new Lease(this, granted), replaced);
    }

    /**
     * The record of lease {@code name}, or empty when there is none. Takes no lock and needs no
     * write access: the record is replaced atomically, never written in place.
     *
     * @throws IllegalArgumentException if {@code name} is not a lease name
     * @throws LeaseCorruptException    if the record cannot be trusted
     * @throws IOException              if it cannot be read
     */
    public Optional<LeaseRecord> read(String name) throws IOException {
        checkName(name);
        return readRecord(name);
    }

    /**
     * Renews lease {@code name} at {@code fence}: its {@code renewedAt} becomes now.
     *
     * @return the record written
     * @throws LeaseLostException if the record is missing, released, or at another fence
     * @throws IOException        as for {@link #acquire}
     */
    public LeaseRecord renew(String name, long fence) throws IOException {
        checkName(name);
        return renew(name, fence, null);
    }

    LeaseRecord renew(String name, long fence, Identity holder) throws IOException {
        return locked(name, guard -> {
            LeaseRecord r = readRecord(name).orElseThrow(() -> new LeaseLostException(name, "there is no record"));
            if (!r.held() || r.fence() != fence || holder != null && !sameProcess(r.holder(), holder)) {
                throw new LeaseLostException(name, "the record is " + r.state().json() + " at fence " + r.fence()
                        + " for pid " + r.holder().pid() + ", not held at fence " + fence);
            }
            LeaseRecord renewed = new LeaseRecord(name, fence, LeaseRecord.State.HELD, r.holder(), writer,
                    r.acquiredAt(), now(), policy.ttl(), r.previous());
            writeRecord(name, renewed);
            return renewed;
        });
    }

    /**
     * Releases lease {@code name} at {@code fence}: writes a released record, the fence kept.
     *
     * @return true if it is released at that fence now (also when it already was); false, and
     *         nothing written, when there is no record or it is at another fence
     * @throws IOException as for {@link #acquire}
     */
    public boolean release(String name, long fence) throws IOException {
        checkName(name);
        return release(name, fence, null);
    }

    boolean release(String name, long fence, Identity holder) throws IOException {
        return locked(name, guard -> {
            Optional<LeaseRecord> current = readRecord(name);
            if (current.isEmpty() || current.get().fence() != fence) {
                return false;
            }
            LeaseRecord r = current.get();
            if (!r.held()) {
                return true;
            }
            if (holder != null && !sameProcess(r.holder(), holder)) {
                return false;
            }
            writeRecord(name, released(r));
            return true;
        });
    }

    /**
     * The operator's override: releases lease {@code name} whoever holds it, the fence kept (the
     * next grant gets the one after it).
     *
     * @return the released record written, or empty when there was no record
     * @throws IOException as for {@link #acquire}
     */
    public Optional<LeaseRecord> breakLease(String name) throws IOException {
        checkName(name);
        return locked(name, guard -> {
            Optional<LeaseRecord> current = readRecord(name);
            if (current.isEmpty()) {
                return Optional.empty();
            }
            LeaseRecord r = released(current.get());
            writeRecord(name, r);
            writeGuardFence(guard, Math.max(readGuardFence(name, guard), r.fence()));
            return Optional.of(r);
        });
    }

    private LeaseRecord released(LeaseRecord r) {
        return new LeaseRecord(r.name(), r.fence(), LeaseRecord.State.RELEASED, r.holder(), writer, r.acquiredAt(),
                r.renewedAt(), r.ttl(), r.previous());
    }

    /** Whether two identities name the same process: everything but the name, which is for people. */
    static boolean sameProcess(Identity a, Identity b) {
        return a.pid() == b.pid() && a.start().equals(b.start()) && a.boot().equals(b.boot())
                && a.host().equals(b.host()) && a.pidns().equals(b.pidns());
    }

    /**
     * Refuses what is not a lease name, touching nothing: 1 to 128 of {@code [A-Za-z0-9._-]}, not
     * starting with {@code .} or {@code -}. Every method that takes a name checks it this way.
     *
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException naming the rule, if it is not a lease name
     */
    public static void checkName(String name) {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("a lease name is 1 to 128 of [A-Za-z0-9._-], not starting with"
                    + " '.' or '-': \"" + name + "\"");
        }
    }

    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }

    /** What runs while lease {@code name} is locked in this JVM and across processes. */
    private interface Locked<T> {
        T run(FileChannel guard) throws IOException;
    }

    private <T> T locked(String name, Locked<T> work) throws IOException {
        Path guard = dir.resolve(name + ".guard");
        ReentrantLock lock = LOCKS.computeIfAbsent(guard, g -> new ReentrantLock());
        lock.lock();
        try {
            refuseNonRegular(name, guard);
            try (FileChannel channel = open(name, guard, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                channel.lock(); // released when the channel closes
                return work.run(channel);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Opens a file of the store without following a link; a link in its place is corrupt. */
    private FileChannel open(String name, Path file, OpenOption... options) throws IOException {
        Set<OpenOption> set = new java.util.HashSet<>(Set.of(options));
        set.add(LinkOption.NOFOLLOW_LINKS);
        try {
            if (ownerOnly) {
                FileAttribute<?> perms = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
                return FileChannel.open(file, set, perms);
            }
            return FileChannel.open(file, set);
        } catch (FileSystemException e) {
            throw linkInPlace(name, file, e);
        }
    }

    /**
     * What a failed open with NOFOLLOW_LINKS means: a link in the file's place (ELOOP) is a corrupt
     * lease; anything else is the I/O failure it was.
     */
    private static IOException linkInPlace(String name, Path file, FileSystemException e) {
        if (Files.isSymbolicLink(file)) {
            return new LeaseCorruptException(name, "a symbolic link stands where " + file.getFileName() + " should be", e);
        }
        return e;
    }

    private static void refuseNonRegular(String name, Path file) throws LeaseCorruptException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return; // missing: it is created, or reads as no record
        }
        if (!a.isRegularFile()) {
            throw new LeaseCorruptException(name, (a.isSymbolicLink() ? "a symbolic link" : a.isDirectory()
                    ? "a directory" : "something other than a file") + " stands where " + file.getFileName() + " should be");
        }
    }

    private Optional<LeaseRecord> readRecord(String name) throws IOException {
        Path file = dir.resolve(name + ".lease");
        refuseNonRegular(name, file);
        byte[] bytes;
        try (SeekableByteChannel in = Files.newByteChannel(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (in.size() > MAX_RECORD_BYTES) {
                throw new LeaseCorruptException(name, "the record holds " + in.size() + " bytes");
            }
            ByteBuffer buffer = ByteBuffer.allocate((int) in.size());
            while (buffer.hasRemaining() && in.read(buffer) >= 0) {
                // read it all
            }
            bytes = buffer.array();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (FileSystemException e) {
            throw linkInPlace(name, file, e);
        }
        return Optional.of(LeaseJson.read(name, bytes));
    }

    /** The guard's fence: decimal ASCII, empty for 0. */
    private static long readGuardFence(String name, FileChannel guard) throws IOException {
        if (guard.size() > 40) {
            throw new LeaseCorruptException(name, "the guard holds " + guard.size() + " bytes, not a fence");
        }
        ByteBuffer b = ByteBuffer.allocate((int) guard.size());
        while (b.hasRemaining() && guard.read(b, b.position()) >= 0) {
            // read it all
        }
        String text = new String(b.array(), StandardCharsets.US_ASCII).strip();
        if (text.isEmpty()) {
            return 0;
        }
        if (!text.matches("[0-9]{1,18}")) {
            throw new LeaseCorruptException(name, "the guard holds \"" + text + "\", not a fence");
        }
        return Long.parseLong(text);
    }

    /**
     * Rewrites the guard's fence in place with one write: it only grows, so its digits cover the
     * old ones, and a process killed at that moment leaves the old value or the new one. Not forced:
     * the record, forced just before, carries the same fence, and the guard is read as a floor
     * beside it; only a power cut followed by deleting the record by hand could lose one grant's
     * worth of floor, and an fsync on every grant is not worth that.
     */
    private static void writeGuardFence(FileChannel guard, long fence) throws IOException {
        byte[] digits = Long.toString(fence).getBytes(StandardCharsets.US_ASCII);
        guard.write(ByteBuffer.wrap(digits), 0);
        guard.truncate(digits.length);
    }

    /**
     * Writes a temporary file named after this process, forces it, moves it over the record
     * atomically and forces the directory: a reader sees the old record or the new one.
     */
    private void writeRecord(String name, LeaseRecord record) throws IOException {
        Path tmp = dir.resolve("." + name + "." + writer.pid() + "-" + writer.start() + ".tmp");
        byte[] bytes = (record.toJson() + "\n").getBytes(StandardCharsets.UTF_8);
        try (FileChannel out = open(name, tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                out.write(b);
            }
            out.force(true);
        }
        try {
            Files.move(tmp, dir.resolve(name + ".lease"), StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        forceDirectory();
    }

    /** Makes the rename durable; a platform that cannot open a directory (Windows) skips it. */
    private void forceDirectory() {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // the rename itself is atomic; only its durability across a power loss depends on this
        }
    }

    /** Removes temporary files of this lease whose writer is proven DEAD (killed mid-write). */
    private void cleanTemporaryFiles(String name) throws IOException {
        Pattern tmp = Pattern.compile("\\." + Pattern.quote(name) + "\\.([0-9]{1,18})-([0-9.]*)\\.tmp");
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "." + name + ".*.tmp")) {
            for (Path file : files) {
                Matcher m = tmp.matcher(file.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                Identity writtenBy = new Identity(Long.parseLong(m.group(1)), m.group(2), "", "", "", "");
                if (!sameProcess(writtenBy, new Identity(writer.pid(), writer.start(), "", "", "", ""))
                        && ProcLive.check(writtenBy) == Liveness.DEAD) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }
}
