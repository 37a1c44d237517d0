package dev.proclive.lease.files;

import dev.proclive.Identity;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.LeaseBook.Waiter;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.lease.book.Records;
import dev.proclive.spi.internal.Elapsed;
import dev.proclive.spi.internal.FileLocker;
import dev.proclive.text.OneLine;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
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
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * The files of a lease directory, and every rule about handling them: no link followed, reads
 * bounded, records replaced atomically, the guard locked and its fence kept, temporary files named
 * and recognised in one place. What a record <em>says</em> is {@link LeaseJson}'s; what to do about
 * it is the store's.
 */
public final class LeaseFiles implements LeaseBook {

    /**
     * How long a call that does not wait waits for another writer's lock: a section takes
     * milliseconds; a writer stopped inside it (^Z, SIGSTOP) makes others fail after this, never hang.
     */
    public static final Duration LOCK_WAIT = Duration.ofSeconds(5);

    /**
     * How often a store lists the directory for dead writers' temporary files: a leftover costs only
     * its room, while a listing at every write costs a store renewing a thousand leases 3,000 names each.
     */
    public static final Duration CLEAN_EVERY = Duration.ofMinutes(1);

    /** The largest record (or queue) read: a record is a few hundred bytes. */
    private static final int MAX_RECORD_BYTES = 1 << 20;

    /** The largest guard read: 19 digits and a newline, with room for spaces. */
    private static final int MAX_GUARD_BYTES = 40;

    /** The longest one wait for the in-JVM lock lasts before the caller's bound is looked at again. */
    private static final long LOCK_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_ONLY_DIRECTORY = PosixFilePermissions.fromString("rwx------");

    private static final Set<OpenOption> CREATE_NEW = Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW,
            LinkOption.NOFOLLOW_LINKS);

    /** The {@link #stamp} of a record that is not there. */
    private static final Object ABSENT = new Object();

    /** What a guard of a shared directory holds once another replaced it: no fence, so every version refuses it. */
    static final String REPLACED = "replaced; call again";

    /**
     * One lock per guard file in this JVM, keyed by the file's identity (device and inode, or its
     * real path where the platform gives none), so that two paths to one directory share it.
     */
    private static final ConcurrentHashMap<Object, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private final Path dir;
    private final Identity writer;
    private final FileLocker locker;
    /** Whether the process that named a temporary file is proven DEAD: then its file may go. */
    private final Predicate<Identity> provenDead;
    /** What a file is created with: owner-only on POSIX, so that nobody opens it before {@link #share}. */
    private final FileAttribute<?>[] createAs;
    /** The permissions of a record, queue or session file where the directory is shared (POSIX); else empty. */
    private final Optional<Set<PosixFilePermission>> shared;
    /** The permissions of a guard in a shared directory: open to its writers alone, as only they may lock it. */
    private final Optional<Set<PosixFilePermission>> sharedGuard;
    /** The shared directory's group: every file made here joins it, as in a setgid directory, to lock no member out. */
    private final Optional<GroupPrincipal> group;
    /**
     * Whether each replace also forces the directory. Not needed where holders record a boot id: a
     * record that a power loss rolled back then names a holder of an earlier boot, proven DEAD.
     */
    private final boolean forceDirectory;
    /** The last confirmed write of each grant this store wrote or renewed, by lease name. */
    private final ConcurrentHashMap<String, Confirmed> confirmed = new ConcurrentHashMap<>();
    private final SessionFile session;
    private volatile Clock clock = Clock.systemUTC();
    private volatile Runnable beforeReplace = () -> { };
    private volatile Runnable beforeSessionWrite = () -> { };
    private volatile long cleanEveryNanos = CLEAN_EVERY.toNanos();
    /** When the temporary files were last looked for, and whether they ever were: guarded by {@code this}. */
    private long cleanedAt;
    private boolean cleaned;
    /** The threads inside {@link #locked} now, each with its depth: {@link #close} waits for them. Guarded by itself. */
    private final Map<Thread, Integer> inside = new HashMap<>();
    /** Whether {@link #close} began: no lock is taken (so nothing written) from then on. Guarded by {@link #inside}. */
    private boolean closed;

    /**
     * A grant's write that went through, at {@code nanos} on the monotonic clock, the TTL newcomers
     * judge it by and the {@code renewedAt} it wrote, and the {@link #stamp} of the record it put
     * in place (null where there is none).
     */
    private record Confirmed(long fence, long nanos, long ttlNanos, Instant renewedAt, Object stamp) {
    }

    /** What runs after a temporary file was written and before it is moved into place. */
    private interface BeforeMove {
        void run(Path tmp) throws IOException;
    }

    private LeaseFiles(Path dir, Identity writer, Predicate<Identity> provenDead,
                       Optional<PosixFileAttributes> directory, boolean forceDirectory, FileLocker locker) {
        Optional<PosixFileAttributes> sharedDirectory = directory.filter(d -> !d.permissions().stream()
                .allMatch(p -> p.name().startsWith("OWNER_")));
        this.dir = dir;
        this.writer = writer;
        this.locker = locker;
        this.provenDead = provenDead;
        this.createAs = directory.isPresent()
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)} : new FileAttribute<?>[0];
        this.shared = sharedDirectory.map(d -> filePermissions(d.permissions(), true));
        this.sharedGuard = sharedDirectory.map(d -> filePermissions(d.permissions(), false));
        this.group = sharedDirectory.map(PosixFileAttributes::group);
        this.forceDirectory = forceDirectory;
        this.session = new SessionFile(dir, writer,
                (file, bytes) -> writeOver(SessionFile.TEMPORARY, file, bytes, shared, t -> beforeSessionWrite.run()));
    }

    /**
     * The permissions of a file in a shared directory of permissions {@code d}: the owner reads and
     * writes; a class that may write the directory (write and search) reads and writes too; one that
     * may only search it reads when {@code readers} ({@code read} and {@code show} need no write
     * access), or gets nothing (the guard).
     */
    private static Set<PosixFilePermission> filePermissions(Set<PosixFilePermission> d, boolean readers) {
        Set<PosixFilePermission> p = EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        if (d.contains(PosixFilePermission.GROUP_WRITE) && d.contains(PosixFilePermission.GROUP_EXECUTE)) {
            p.add(PosixFilePermission.GROUP_READ);
            p.add(PosixFilePermission.GROUP_WRITE);
        } else if (readers && d.contains(PosixFilePermission.GROUP_EXECUTE)) {
            p.add(PosixFilePermission.GROUP_READ);
        }
        if (d.contains(PosixFilePermission.OTHERS_WRITE) && d.contains(PosixFilePermission.OTHERS_EXECUTE)) {
            p.add(PosixFilePermission.OTHERS_READ);
            p.add(PosixFilePermission.OTHERS_WRITE);
        } else if (readers && d.contains(PosixFilePermission.OTHERS_EXECUTE)) {
            p.add(PosixFilePermission.OTHERS_READ);
        }
        return p;
    }

    /**
     * The files in {@code dir}, created owner-only (on POSIX) if it is missing, written by {@code writer}
     * (temporary files are named after it), guards locked across processes by {@code locker};
     * {@code provenDead} and {@code forceDirectory} are as the fields of those names say.
     *
     * @throws NotDirectoryException if {@code dir} exists and is not a directory
     */
    public static LeaseFiles open(Path dir, Identity writer, Predicate<Identity> provenDead,
                                  boolean forceDirectory, FileLocker locker) throws IOException {
        boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
        if (!Files.exists(dir) && posix) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIRECTORY));
        } else if (!Files.exists(dir)) {
            Files.createDirectories(dir);
        }
        if (!Files.isDirectory(dir)) {
            throw new NotDirectoryException(dir.toString());
        }
        Path real = dir.toRealPath();
        Optional<PosixFileAttributes> attributes = posix ? Optional.of(Files.readAttributes(real, PosixFileAttributes.class))
                : Optional.empty();
        return new LeaseFiles(real, writer, provenDead, attributes, forceDirectory, locker);
    }

    /** The directory, resolved. */
    public Path directory() {
        return dir;
    }

    /** Runs {@code hook} after a record was written and before it replaces the old one: a seam for tests. */
    public void beforeReplace(Runnable hook) {
        this.beforeReplace = Objects.requireNonNull(hook);
    }

    /** As {@link #beforeReplace}, for the session file's writes alone: a seam for tests. */
    public void beforeSessionWrite(Runnable hook) {
        this.beforeSessionWrite = Objects.requireNonNull(hook);
    }

    /** Looks for dead writers' temporary files at most once in {@code every} from now on: a seam for tests. */
    public void cleanEvery(Duration every) {
        this.cleanEveryNanos = every.toNanos();
    }

    /** The clock of the store over this book: a session file's {@code renewedAt} is its time. */
    public void clock(Clock c) {
        this.clock = c;
        session.clock(c);
    }

    @Override
    public Map<String, String> environment() {
        return Map.of(LeaseNames.DIR_VARIABLE, dir.toString());
    }

    /**
     * Whether the grant at {@code fence}, last written or renewed by this store, has gone
     * unconfirmed (neither its record's write nor its session file's) for three quarters of its TTL,
     * on the monotonic clock: a newcomer may take an UNKNOWN holder's lease after the TTL, so the
     * holder hears it first. A grant this store keeps but never wrote (a keeper's) is judged by its
     * session file alone.
     */
    @Override
    public boolean lost(String name, long fence) {
        Confirmed c = confirmed.get(name);
        if (c == null || c.fence() != fence) {
            return session.unconfirmed(name, fence);
        }
        long last = c.nanos();
        OptionalLong kept = session.confirmed(name, fence);
        if (kept.isPresent() && kept.getAsLong() - last > 0) {
            last = kept.getAsLong();
        }
        // the shorter TTL: a renewal elsewhere (lease renew --ttl) may have shortened what newcomers judge by
        long ttl = Math.min(c.ttlNanos(), session.ttlNanos(name, fence).orElse(Long.MAX_VALUE));
        return System.nanoTime() - last > ttl / 4 * 3;
    }

    /**
     * Names the grant in the session file by the TTL its record has; a record renewed elsewhere since
     * this store last wrote it (a later {@code renewedAt}: {@code lease renew --ttl}) also sets the TTL
     * its loss is judged by here, a longer one too. A read older than this store's last write changes
     * nothing there: the shorter of the two TTLs is still the one judged by.
     */
    @Override
    public void keep(Grant grant) {
        LeaseRecord r = grant.record();
        session.keep(r.name(), r.fence(), r.ttl(), r.renewedAt());
        confirmed.computeIfPresent(r.name(), (n, c) -> c.fence() == r.fence() && r.renewedAt().isAfter(c.renewedAt())
                ? new Confirmed(c.fence(), c.nanos(), r.ttl().toNanos(), r.renewedAt(), c.stamp()) : c);
    }

    @Override
    public void ended(String name, long fence) {
        session.drop(name, fence);
    }

    @Override
    public Optional<Object> writtenStamp(String name, long fence) {
        Confirmed c = confirmed.get(name);
        return c != null && c.fence() == fence ? Optional.ofNullable(c.stamp()) : Optional.empty();
    }

    /**
     * Writes nothing more: the session file stops (what it names stays fresh for one TTL more, as
     * after a last renewal), and a call that would lock a lease throws {@link IllegalStateException}
     * from now on, as does one still waiting for a lock (before it writes anything). Returns once the
     * writes under way have landed, waiting 5 s at most for each kind (the session file's, then the
     * locked calls'): a directory removed just after a close sees no file appear in it, unless a
     * write outlasted that wait (a file system that does not answer), the closing thread was
     * interrupted, or the close came from inside a locked call (that call, and those waiting behind
     * it, are not waited for).
     */
    @Override
    public void close() {
        synchronized (inside) {
            closed = true;
        }
        session.close();
        long deadline = System.nanoTime() + SessionFile.CLOSE_WAIT.toNanos();
        synchronized (inside) {
            Thread self = Thread.currentThread();
            while (inside.keySet().stream().anyMatch(t -> t != self)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return; // a write hung past it (a file system that does not answer) is left to end by itself
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(inside, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** This thread enters a locked call; refused once the book is closed. */
    private void enter(String name) {
        synchronized (inside) {
            refuseIfClosed(name);
            inside.merge(Thread.currentThread(), 1, Integer::sum);
        }
    }

    /** Refuses the call once the book is closed: nothing is written through it any more. */
    private void refuseIfClosed(String name) {
        synchronized (inside) {
            if (closed) {
                throw new IllegalStateException("the lease store is closed: lease " + name + " is not locked through it");
            }
        }
    }

    /** This thread leaves a locked call. */
    private void leave() {
        synchronized (inside) {
            if (inside.computeIfPresent(Thread.currentThread(), (t, depth) -> depth == 1 ? null : depth - 1) == null) {
                inside.notifyAll();
            }
        }
    }

    @Override
    public <T> T locked(String name, Locked<T> work) throws IOException {
        return locked(name, LOCK_WAIT, work);
    }

    /**
     * Runs {@code work} while lease {@code name} is locked, in this JVM and across processes, after
     * removing dead writers' temporary files when due ({@link #CLEAN_EVERY}); {@link FileLocker.Busy}
     * when another writer kept it locked for all of {@code most}; {@link IllegalStateException}
     * once the book is {@linkplain #close closed}.
     */
    @Override
    public <T> T locked(String name, Duration most, Locked<T> work) throws IOException {
        enter(name);
        try {
            return lockedOpen(name, most, work);
        } finally {
            leave();
        }
    }

    private <T> T lockedOpen(String name, Duration most, Locked<T> work) throws IOException {
        Elapsed waited = Elapsed.bounded(most);
        Path guard = dir.resolve(name + ".guard");
        BasicFileAttributes found = guardAttributes(name, guard);
        boolean exposed = sharedGuard.isPresent() && exposed((PosixFileAttributes) found);
        Object fileKey = found.fileKey();
        ReentrantLock inJvm = LOCKS.computeIfAbsent(fileKey != null ? fileKey : guard.toRealPath(),
                k -> new ReentrantLock(true));
        if (inJvm.isHeldByCurrentThread()) {
            throw new IllegalStateException("lease " + name + " is already locked by this thread");
        }
        lockInJvm(name, inJvm, guard, most, waited);
        FileLocker.Lock across = null;
        FileChannel own = null;
        try {
            refuseIfClosed(name); // closed while it waited for this JVM's lock
            try {
                across = locker.lock(guard, waited.left());
            } catch (FileLocker.Busy busy) {
                if (exposed) {
                    throw new FileLocker.Busy(guard, most, guard.getFileName() + " may be opened by users who may only"
                            + " read the directory (an older version left it so), and one of them may hold its lock:"
                            + " nothing tells that from a writer's; once it lets go, the next call replaces the guard"
                            + " with one that no reader can open");
                }
                throw busy;
            }
            refuseIfClosed(name); // closed while it waited for another process's lock: nothing written
            own = across.channel().isPresent() ? null : openGuard(name, guard);
            if (exposed && own != null && fileKey != null && fileKey.equals(
                    Files.readAttributes(guard, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey())) {
                Optional<FileLocker.Lock> replaced = replaceGuard(name, guard, own);
                if (replaced.isPresent()) {
                    FileLocker.Lock old = across;
                    FileChannel oldChannel = own;
                    across = replaced.get();
                    own = null;
                    closeAll(oldChannel, old);
                    own = openGuard(name, guard);
                }
            }
            cleanTemporaryFilesWhenDue();
            return work.run(new ChannelGuard(name, own != null ? own : across.channel().get()));
        } catch (IOException e) {
            throw linkInPlace(name, guard, e);
        } finally {
            try {
                closeAll(own, across);
            } finally {
                inJvm.unlock();
            }
        }
    }

    /** Closes {@code channel}, then lets {@code lock} go (either may be null). */
    private static void closeAll(FileChannel channel, FileLocker.Lock lock) throws IOException {
        try {
            if (channel != null) {
                channel.close();
            }
        } finally {
            if (lock != null) {
                lock.close();
            }
        }
    }

    /**
     * Replaces the guard, locked here through {@code old}, which users other than the directory's
     * writers may have opened (an older version made it 0644, or it was in another group): a fresh
     * copy, made owner-only, then given a guard's group and permissions, is locked, renamed over it,
     * and the directory forced (a power loss never brings the old one back after fences went on in
     * the new one). A descriptor to the old guard then holds nobody out: every locker makes sure the
     * file it locked is the one at the path ({@link FileLocker#lock}), and a writer that locked the
     * old one meanwhile locks the new one instead. The old one is left holding {@link #REPLACED},
     * which no version reads as a fence. Best effort: where a step fails, the old guard stays, still
     * locked.
     *
     * @return the lock on the new guard, held: the caller lets the old one go
     */
    private Optional<FileLocker.Lock> replaceGuard(String name, Path guard, FileChannel old) throws IOException {
        if (old.size() > MAX_GUARD_BYTES) {
            return Optional.empty(); // corrupt: break rewrites it first
        }
        byte[] content = readAll(old);
        FileLocker.Lock[] lock = new FileLocker.Lock[1];
        try {
            // nobody else locks a temporary file
            writeOver(name, guard, content, sharedGuard, tmp -> lock[0] = locker.lock(tmp, Duration.ZERO));
        } catch (IOException e) {
            if (lock[0] != null) {
                lock[0].close();
            }
            return Optional.empty();
        }
        forceDirectory();
        byte[] replaced = (REPLACED + "\n").getBytes(StandardCharsets.US_ASCII);
        try {
            old.write(ByteBuffer.wrap(replaced), 0);
            old.truncate(replaced.length);
            old.force(false);
        } catch (IOException e) {
            // the new guard is in place; the old one's fence is only ever read by a writer that locked it before
        }
        return Optional.of(lock[0]);
    }

    /**
     * Takes {@code inJvm}, a fair lock (threads that take it in a loop never keep one out), in
     * slices on the monotonic clock until {@code waited} says {@code most} has passed (a clock
     * stepped back stretches no slice), or the book is closed.
     */
    private void lockInJvm(String name, ReentrantLock inJvm, Path guard, Duration most, Elapsed waited) throws IOException {
        try {
            while (!inJvm.tryLock(Math.max(0, Math.min(waited.leftNanos(), LOCK_SLICE_NANOS)), TimeUnit.NANOSECONDS)) {
                if (waited.leftNanos() <= 0) {
                    throw new FileLocker.Busy(guard, most);
                }
                refuseIfClosed(name); // a wait for the lock is no write under way: it ends with the close
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the lock on " + guard);
        }
    }

    /**
     * The guard's attributes (POSIX ones in a shared directory), the guard created first if it is
     * missing (owner-only until it has the directory's group and a guard's permissions); refused if
     * not a regular file. In a shared directory a guard of this store's user with the wrong group or
     * permissions (an older version's umask, or by hand) is given them — unless it is
     * {@linkplain #exposed exposed}: then only its replacement, under its lock, shuts out what was
     * opened before ({@link #replaceGuard}).
     */
    private BasicFileAttributes guardAttributes(String name, Path guard) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                Class<? extends BasicFileAttributes> kind = sharedGuard.isPresent() ? PosixFileAttributes.class
                        : BasicFileAttributes.class;
                BasicFileAttributes a = Files.readAttributes(guard, kind, LinkOption.NOFOLLOW_LINKS);
                refuseNonRegular(name, guard, a);
                if (a instanceof PosixFileAttributes p && sharedGuard.isPresent() && !exposed(p)
                        && (group.filter(g -> !g.equals(p.group())).isPresent()
                        || !p.permissions().equals(sharedGuard.get()))) {
                    try {
                        share(guard, sharedGuard); // a regular file: no link to follow
                    } catch (IOException notOurs) {
                        // another user's: only its owner can change it
                    }
                }
                return a;
            } catch (NoSuchFileException e) {
                if (attempt > 0) {
                    throw e;
                }
                try {
                    Files.newByteChannel(guard, CREATE_NEW, createAs).close();
                    share(guard, sharedGuard);
                } catch (FileAlreadyExistsException raced) {
                    // another process made it: read it again
                }
            }
        }
    }

    /**
     * Whether a guard of a shared directory may have been opened by someone a guard there is not
     * open to (a class its permissions let read or write it that guards give nothing, or another
     * group's members), who could hold its lock through that descriptor whatever its permissions become.
     */
    private boolean exposed(PosixFileAttributes a) {
        Set<PosixFilePermission> allowed = sharedGuard.orElseThrow();
        boolean otherGroup = group.filter(g -> !g.equals(a.group())).isPresent();
        for (PosixFilePermission p : a.permissions()) {
            boolean groups = p == PosixFilePermission.GROUP_READ || p == PosixFilePermission.GROUP_WRITE;
            boolean others = p == PosixFilePermission.OTHERS_READ || p == PosixFilePermission.OTHERS_WRITE;
            if ((groups && (otherGroup || !allowed.contains(p))) || (others && !allowed.contains(p))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Gives {@code file}, just made here, the directory's group, then {@code permissions} (so that
     * what a group gets is never its maker's group's), whatever the umask took away. A group this
     * process is not a member of cannot be given (the file stays in its maker's group; README says so).
     */
    private void share(Path file, Optional<Set<PosixFilePermission>> permissions) throws IOException {
        if (permissions.isEmpty()) {
            return;
        }
        if (group.isPresent()) {
            try {
                Files.getFileAttributeView(file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).setGroup(group.get());
            } catch (IOException notAMember) {
                // only the owner, a member of that group, or root may give it
            }
        }
        Files.setPosixFilePermissions(file, permissions.get());
    }

    private final class ChannelGuard implements Guard {
        private final String name;
        private final FileChannel channel;
        /** The fence read or written last, while this lock is held; -1 before the first read. */
        private long known = -1;
        private Optional<LeaseRecord> record;

        ChannelGuard(String name, FileChannel channel) {
            this.name = name;
            this.channel = channel;
        }

        @Override
        public Optional<LeaseRecord> record() throws IOException {
            if (record == null) {
                record = read(name);
            }
            return record;
        }

        /** Replaces the record; a guard found below the record's fence (restored by hand) is raised to it. */
        @Override
        public void replace(LeaseRecord r) throws IOException {
            LeaseFiles.this.replace(name, r);
            record = Optional.of(r);
            if (r.fence() > fence()) {
                fence(r.fence());
            }
        }

        @Override
        public LeaseRecord grant(LeaseRecord r) throws IOException {
            long highest = Math.max(fence(), record().map(LeaseRecord::fence).orElse(0L));
            if (highest == Long.MAX_VALUE) {
                throw new LeaseCorruptException(name, "it has granted its last fence, " + Long.MAX_VALUE
                        + "; nothing was granted (use another name)");
            }
            LeaseRecord granted = Records.fenced(r, highest + 1);
            replace(granted); // above the guard's fence: raises it
            return granted;
        }

        @Override
        public void remove() throws IOException {
            delete(name, dir.resolve(name + ".lease"), "record");
            forceDirectory();
            record = Optional.empty();
        }

        /** Its own {@code renewedAt} plus its TTL, or the newest session file's that names it, whichever is later. */
        @Override
        public Instant freshUntil(LeaseRecord r) throws IOException {
            Instant own = r.freshUntil();
            return SessionFile.renewedAt(dir, name, r.fence(), clock.instant(), locker).map(at -> at.plus(r.ttl()))
                    .filter(own::isBefore).orElse(own);
        }

        /**
         * The waiters ({@code NAME.queue}, one {@link LeaseJson#waiter} a line, longest-waiting first).
         * Fairness, not safety, rests on it: a queue that cannot be read reads as empty, and the next
         * write replaces it; a link or non-regular file in its place is corrupt.
         */
        @Override
        public List<Waiter> waiters() throws IOException {
            Path file = dir.resolve(name + ".queue");
            List<Waiter> queue = new ArrayList<>();
            if (!present(name, file)) {
                return queue;
            }
            try {
                byte[] bytes = locker.read(file, MAX_RECORD_BYTES);
                if (bytes.length > MAX_RECORD_BYTES) {
                    return queue;
                }
                // not UTF-8: a CharacterCodingException, and the queue reads as empty
                String text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
                for (String line : text.lines().toList()) { // as a file's lines: \n, \r\n or \r ends one
                    if (!line.isBlank()) {
                        queue.add(LeaseJson.waiter(line));
                    }
                }
                return queue;
            } catch (IOException | RuntimeException e) {
                return new ArrayList<>();
            }
        }

        /** Replaces the queue atomically; removes it when empty. */
        @Override
        public void waiters(List<Waiter> queue) throws IOException {
            Path file = dir.resolve(name + ".queue");
            if (queue.isEmpty()) {
                delete(name, file, "queue");
                return;
            }
            StringBuilder text = new StringBuilder();
            for (Waiter w : queue) {
                text.append(LeaseJson.waiter(w)).append('\n');
            }
            writeOver(name, file, text.toString().getBytes(StandardCharsets.UTF_8), shared, tmp -> { });
        }

        @Override
        public long fence() throws IOException {
            if (known < 0) {
                known = guardFence(name, channel);
            }
            return known;
        }

        @Override
        public boolean repair() throws IOException {
            try {
                fence();
                return false;
            } catch (LeaseCorruptException corrupt) {
                // what break is for: rewritten below from what the record proves
            }
            long proven = 0;
            try {
                Optional<LeaseRecord> r = record();
                if (r.isPresent()) {
                    proven = Math.max(r.get().fence(), r.get().previous().map(LeaseRecord.Takeover::fence).orElse(0L));
                }
            } catch (LeaseCorruptException corruptRecord) {
                record = null; // it proves nothing: break removes it
            }
            fence(proven);
            return true;
        }

        /**
         * Rewrites the fence in place with one write: it only grows, so its digits cover the old ones,
         * and a process killed at that moment leaves the old value or the new one. Forced before it
         * returns, so before a grant returns or a spawned child starts: a fence is never handed out
         * twice, even across a power loss that rolled the record back.
         */
        private void fence(long fence) throws IOException {
            byte[] digits = Long.toString(fence).getBytes(StandardCharsets.US_ASCII);
            channel.write(ByteBuffer.wrap(digits), 0);
            channel.truncate(digits.length);
            channel.force(false);
            known = fence;
        }
    }

    /** The fence a guard holds (0 when empty); corrupt, saying how to go on, if it holds anything else. */
    private static long guardFence(String name, SeekableByteChannel channel) throws IOException {
        long size = channel.size();
        if (size > MAX_GUARD_BYTES) {
            throw corruptGuard(name, size + " bytes");
        }
        return guardFence(name, readAll(channel));
    }

    /** As {@link #guardFence(String, SeekableByteChannel)}, over the bytes read from it ({@link FileLocker#read}). */
    private static long guardFence(String name, byte[] bytes) throws IOException {
        if (bytes.length > MAX_GUARD_BYTES) {
            throw corruptGuard(name, "more than " + MAX_GUARD_BYTES + " bytes");
        }
        String text = new String(bytes, StandardCharsets.US_ASCII).strip();
        if (text.isEmpty()) {
            return 0;
        }
        return Records.parseFence(text).orElseThrow(() -> corruptGuard(name, OneLine.quote(text)));
    }

    private static LeaseCorruptException corruptGuard(String name, String holds) {
        return new LeaseCorruptException(name, "the guard holds " + holds + ", not a fence of 0 to " + Long.MAX_VALUE
                + "; break the lease to go on (proclive lease break " + name + "): the guard is rewritten with the"
                + " highest fence the record proves, and fences go on above it");
    }

    /**
     * The guard's fence, read without the lock (it only grows); empty when there is no guard, or
     * this process may not read it (a guard is open only to the directory's writers).
     */
    @Override
    public OptionalLong highestFence(String name) throws IOException {
        Path guard = dir.resolve(name + ".guard");
        if (!present(name, guard)) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(guardFence(name, readFound(name, guard, MAX_GUARD_BYTES)));
        } catch (NoSuchFileException | java.nio.file.AccessDeniedException e) {
            return OptionalLong.empty();
        }
    }

    @Override
    public List<Grant> grants() throws IOException {
        List<Grant> grants = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.lease")) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                name = name.substring(0, name.length() - ".lease".length());
                try {
                    if (LeaseNames.isName(name)) {
                        read(name).filter(LeaseRecord::granted).ifPresent(r -> grants.add(new Grant(r, 0)));
                    }
                } catch (IOException | IllegalArgumentException e) {
                    // corrupt (a record the API's checks refuse too), or gone meanwhile: not one to keep
                }
            }
        }
        return grants;
    }

    /** The record of lease {@code name}, or empty when there is none. Takes no lock. */
    @Override
    public Optional<LeaseRecord> read(String name) throws IOException {
        Path file = dir.resolve(name + ".lease");
        if (!present(name, file)) {
            return Optional.empty();
        }
        byte[] bytes;
        try {
            bytes = readFound(name, file, MAX_RECORD_BYTES);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        if (bytes.length > MAX_RECORD_BYTES) {
            throw new LeaseCorruptException(name, "the record holds more than " + MAX_RECORD_BYTES + " bytes");
        }
        return Optional.of(LeaseJson.read(name, bytes));
    }

    /**
     * The record file's identity (device and inode), size and modification time, without following
     * a link; {@link #ABSENT} when there is none. Every replace moves a new file into place, so the
     * identity changes with each write (and the time and size, should an inode be reused). Empty
     * where the platform names no file identity.
     */
    @Override
    public Optional<Object> stamp(String name) throws IOException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(dir.resolve(name + ".lease"), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return Optional.of(ABSENT);
        }
        if (a.fileKey() == null) {
            return Optional.empty();
        }
        return Optional.of(List.of(a.fileKey(), a.lastModifiedTime(), a.size(), a.isRegularFile()));
    }

    /**
     * Writes {@code record} over the old one ({@link #writeOver}); the directory is forced too only
     * where rolled-back records cannot be told by their holder's boot ({@link #forceDirectory}): a
     * power loss may then lose the latest record, never a fence (the guard is forced).
     */
    private void replace(String name, LeaseRecord record) throws IOException {
        writeOver(name, dir.resolve(name + ".lease"), (LeaseJson.write(record) + "\n").getBytes(StandardCharsets.UTF_8),
                shared, tmp -> beforeReplace.run());
        if (forceDirectory) {
            forceDirectory();
        }
        if (!record.granted()) {
            confirmed.remove(name);
            return;
        }
        Object written;
        try {
            written = stamp(name).orElse(null); // under the lock: the record just moved into place
        } catch (IOException e) {
            written = null; // a look reads it
        }
        confirmed.put(name, new Confirmed(record.fence(), System.nanoTime(), record.ttl().toNanos(), record.renewedAt(), written));
    }

    /**
     * Writes {@code bytes} to a new temporary file named for lease {@code lease} with
     * {@code permissions}, forces it, runs {@code beforeMove}, and moves it over {@code file}
     * atomically: a reader sees the old file or the new one, and the new one's bytes are on disk
     * before it is named. A write that fails removes its temporary file.
     */
    private void writeOver(String lease, Path file, byte[] bytes, Optional<Set<PosixFilePermission>> permissions,
                           BeforeMove beforeMove) throws IOException {
        Path tmp = null;
        try {
            for (int attempt = 0; tmp == null; attempt++) {
                Path candidate = dir.resolve(TemporaryName.of(lease, writer).toString());
                try (FileChannel out = FileChannel.open(candidate, CREATE_NEW, createAs)) {
                    tmp = candidate;
                    share(tmp, permissions);
                    ByteBuffer b = ByteBuffer.wrap(bytes);
                    while (b.hasRemaining()) {
                        out.write(b);
                    }
                    out.force(true);
                } catch (FileAlreadyExistsException e) {
                    if (tmp != null || attempt == 7) {
                        throw e; // 64 random bits taken eight times: something fills the name space
                    }
                }
            }
            beforeMove.run(tmp);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            tmp = null;
        } finally {
            if (tmp != null) {
                deleteQuietly(tmp);
            }
        }
    }

    /**
     * Deletes {@code file}: a link itself, never what it points to, or an empty directory in its
     * place; a directory that is not empty is corrupt, for its owner to remove.
     */
    private static void delete(String name, Path file, String what) throws IOException {
        try {
            Files.deleteIfExists(file);
        } catch (DirectoryNotEmptyException e) {
            throw new LeaseCorruptException(name, "a directory that is not empty stands where the " + what
                    + " should be (" + file + "): remove it by hand");
        }
    }

    /** Makes the rename durable; a platform that cannot open a directory (Windows) skips it. */
    private void forceDirectory() {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // the rename itself is atomic; only its durability across a power loss depends on this
        }
    }

    /**
     * Removes the temporary and session files whose writer is proven DEAD (killed mid-write), at
     * this store's first write, then once {@link #CLEAN_EVERY} has passed; one thread at a time,
     * while the others go on. A listing that fails is tried again at the next write.
     */
    private void cleanTemporaryFilesWhenDue() throws IOException {
        long start = System.nanoTime();
        synchronized (this) {
            if (cleaned && start - cleanedAt < cleanEveryNanos) {
                return;
            }
            cleaned = true; // claimed: another thread does not list it too meanwhile
            cleanedAt = start;
        }
        try {
            cleanTemporaryFiles();
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                if (cleanedAt == start) {
                    cleaned = false; // the next write lists it again
                }
            }
            throw e;
        }
    }

    /** Anything that is not a regular file is left alone; a file that cannot be removed is left for the next look. */
    private void cleanTemporaryFiles() throws IOException {
        SessionFile.clean(dir, provenDead, clock.instant(), locker);
        DirectoryStream.Filter<Path> temporary = p -> {
            String file = p.getFileName().toString();
            return file.startsWith(".") && file.endsWith(".tmp"); // a glob would compile a regex each time
        };
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, temporary)) {
            for (Path file : files) {
                Optional<TemporaryName> t = TemporaryName.parse(file.getFileName().toString());
                if (t.isPresent() && LeaseNames.isName(t.get().lease()) && !t.get().writtenBy(writer)
                        && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) && provenDead.test(t.get().writer())) {
                    deleteQuietly(file);
                }
            }
        } catch (DirectoryIteratorException e) {
            throw e.getCause();
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException | UncheckedIOException e) {
            // left for the next writer, which removes a dead writer's files
        }
    }

    /** All of {@code in}'s bytes, from its start. */
    private static byte[] readAll(SeekableByteChannel in) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) in.size());
        in.position(0);
        while (b.hasRemaining() && in.read(b) >= 0) {
            // read it all
        }
        return b.array();
    }

    /** Opens the guard to read and write, without following a link; a link in its place is corrupt. */
    private static FileChannel openGuard(String name, Path guard) throws IOException {
        try {
            return FileChannel.open(guard, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw linkInPlace(name, guard, e);
        }
    }

    /**
     * What a failed open or read without following a link means: something other than a regular
     * file in the file's place, put there after it was found (a link: ELOOP, which the JDK reports
     * as a plain {@link IOException} in its own words; a directory: EISDIR; a socket: ENXIO), is a
     * corrupt lease, said as {@link #present} says it; anything else is the I/O failure it was.
     */
    private static IOException linkInPlace(String name, Path file, IOException e) {
        if (e instanceof NoSuchFileException || e instanceof dev.proclive.lease.LeaseException) {
            return e;
        }
        try {
            present(name, file);
        } catch (LeaseCorruptException notAFile) {
            notAFile.addSuppressed(e);
            return notAFile;
        } catch (IOException gone) {
            // nothing there to say more of
        }
        return e;
    }

    /**
     * {@code file}'s bytes ({@link FileLocker#read}); where none were read, what is in its place
     * now is looked at again, so that a FIFO put there after it was found (which reads as empty) is
     * said to be one.
     */
    private byte[] readFound(String name, Path file, int most) throws IOException {
        byte[] bytes;
        try {
            bytes = locker.read(file, most);
        } catch (IOException e) {
            throw linkInPlace(name, file, e);
        }
        if (bytes.length == 0) {
            present(name, file);
        }
        return bytes;
    }

    /** Whether {@code file} is there, never followed; anything but a regular file in its place is corrupt. */
    private static boolean present(String name, Path file) throws IOException {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            refuseNonRegular(name, file, a);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    private static void refuseNonRegular(String name, Path file, BasicFileAttributes a) throws LeaseCorruptException {
        if (!a.isRegularFile()) {
            throw new LeaseCorruptException(name, (a.isSymbolicLink() ? "a symbolic link" : a.isDirectory()
                    ? "a directory" : "something other than a file") + " stands where " + file.getFileName() + " should be");
        }
    }
}
