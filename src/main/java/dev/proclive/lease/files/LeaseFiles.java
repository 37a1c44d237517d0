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
import java.nio.charset.CharsetDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
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
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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

/** A lease directory's files: no link followed, reads bounded, records replaced atomically, the guard's fence kept. */
public final class LeaseFiles implements LeaseBook {

    /** A section takes milliseconds: a writer stopped inside one (SIGSTOP) makes others fail after this, not hang. */
    public static final Duration LOCK_WAIT = Duration.ofSeconds(5);

    /** A leftover costs only its room; a listing per write costs a store renewing 1,000 leases 3,000 names each. */
    public static final Duration CLEAN_EVERY = Duration.ofMinutes(1);

    /** The most one pass of cleaning takes: a directory flooded with files makes no call slow. */
    private static final long CLEAN_BUDGET_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** The largest record (or queue) read: a record is a few hundred bytes. */
    private static final int MAX_RECORD_BYTES = LeaseJson.MAX_RECORD_BYTES;
    /** Lines of a queue that are no ticket read past before the rest is left unread. */
    private static final int BAD_LINES = 16;

    /** The largest guard read: 19 digits and a newline, with room for spaces. */
    private static final int MAX_GUARD_BYTES = 40;

    /** The longest wait for the in-JVM lock before the caller's bound and the close are looked at again. */
    private static final long LOCK_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private static final Set<OpenOption> CREATE_NEW = Set.of(StandardOpenOption.WRITE, StandardOpenOption.CREATE_NEW,
            LinkOption.NOFOLLOW_LINKS);

    private static final Object ABSENT = new Object();

    /** What a guard of a shared directory holds once another replaced it: no fence, so every version refuses it. */
    static final String REPLACED = "replaced; call again";

    /** What a guard holds that replaced one with other names (hard links) and no fence: corrupt until break. */
    static final String LINKED = "had other names, no fence";

    /** Per guard, by file identity (device and inode, else real path): two paths to one directory share a lock. */
    private static final ConcurrentHashMap<Object, ReentrantLock> LOCKS = new ConcurrentHashMap<>();

    private final Path dir;
    private final Identity writer;
    private final FileLocker locker;
    /** Only a writer proven DEAD may have its temporary files removed. */
    private final Predicate<Identity> provenDead;
    private final FileModes modes;
    /** Not needed with boot ids: a record a power loss rolled back names a holder of an earlier boot, proven DEAD. */
    private final boolean forceDirectory;
    private final String place;
    private final ConcurrentHashMap<String, Confirmed> confirmed = new ConcurrentHashMap<>();
    private final SessionFile session;
    private volatile Clock clock = Clock.systemUTC();
    private volatile Runnable beforeReplace = () -> { };
    private volatile Runnable beforeSessionWrite = () -> { };
    private volatile long cleanEveryNanos = CLEAN_EVERY.toNanos();
    /** On {@code System.nanoTime()}; guarded by {@code this}. */
    private long cleanedAt;
    private boolean cleaned;
    /** Threads inside {@link #locked}, with depth: {@link #close} waits for them. Guarded by itself. */
    private final Map<Thread, Integer> inside = new HashMap<>();
    /** No lock is taken (so nothing written) once set. Guarded by {@link #inside}. */
    private boolean closed;

    /** A grant's write that went through; {@code nanos} on {@code System.nanoTime()}; {@code stamp} null where none. */
    private record Confirmed(long fence, long nanos, long ttlNanos, Instant renewedAt, Object stamp) {
    }

    private interface BeforeMove {
        void run(Path tmp) throws IOException;
    }

    private LeaseFiles(Path dir, Identity writer, Predicate<Identity> provenDead, FileModes modes,
                       boolean forceDirectory, FileLocker locker) {
        this.dir = dir;
        this.writer = writer;
        this.locker = locker;
        this.provenDead = provenDead;
        this.modes = modes;
        this.forceDirectory = forceDirectory;
        Object key = null;
        try {
            key = Files.readAttributes(dir, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            // as spelled: the place of one store alone
        }
        this.place = key != null ? "directory " + key : LeaseBook.super.place();
        this.session = new SessionFile(dir, writer,
                (file, bytes) -> writeOver(SessionFile.TEMPORARY, file, bytes, false, t -> beforeSessionWrite.run()));
    }

    /** {@code dir} made owner-only (on POSIX) if missing; {@link NotDirectoryException} if it is not a directory. */
    public static LeaseFiles open(Path dir, Identity writer, Predicate<Identity> provenDead,
                                  boolean forceDirectory, FileLocker locker) throws IOException {
        boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
        if (!Files.exists(dir) && posix) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(FileModes.OWNER_ONLY_DIRECTORY));
        } else if (!Files.exists(dir)) {
            Files.createDirectories(dir);
        }
        if (!Files.isDirectory(dir)) {
            throw new NotDirectoryException(dir.toString());
        }
        Path real = dir.toRealPath();
        return new LeaseFiles(real, writer, provenDead, FileModes.of(real), forceDirectory, locker);
    }

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

    /** The directory's device and inode, read as it was opened: a bind mount of it elsewhere is the same place. */
    @Override
    public String place() {
        return place;
    }

    /** Unconfirmed by record or session file for 3/4 of its TTL: its holder hears before a newcomer may take it. */
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
        // the shorter: a renewal elsewhere (lease renew --ttl) may have shortened what newcomers judge by
        long ttl = Math.min(c.ttlNanos(), session.ttlNanos(name, fence).orElse(Long.MAX_VALUE));
        return System.nanoTime() - last > ttl / 4 * 3;
    }

    /** A later {@code renewedAt} (renewed elsewhere: {@code lease renew --ttl}) sets the TTL its loss is judged by. */
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
     * Writes nothing more (session grants stay fresh one TTL more; locked calls, even waiting ones, throw). Waits up to
     * 5 s for the session write, then other threads' locked calls: a directory removed just after sees no file appear.
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
                    return; // a hung write (a file system that does not answer) ends by itself
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

    private void enter(String name) {
        synchronized (inside) {
            refuseIfClosed(name);
            inside.merge(Thread.currentThread(), 1, Integer::sum);
        }
    }

    private void refuseIfClosed(String name) {
        synchronized (inside) {
            if (closed) {
                throw new IllegalStateException("the lease store is closed: lease " + name + " is not locked through it");
            }
        }
    }

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

    /** {@link FileLocker.Busy} if held elsewhere all of {@code most}; {@link IllegalStateException} once closed. */
    @Override
    public <T> T locked(String name, Duration most, Locked<T> work) throws IOException {
        enter(name);
        try {
            T answer = lockedOpen(name, most, work);
            cleanTemporaryFilesWhenDue(); // after the lock: what a directory full of files costs holds nobody out
            return answer;
        } finally {
            leave();
        }
    }

    private <T> T lockedOpen(String name, Duration most, Locked<T> work) throws IOException {
        Elapsed waited = Elapsed.bounded(most);
        Path guard = dir.resolve(name + ".guard");
        BasicFileAttributes found = guardAttributes(name, guard);
        boolean exposed = found instanceof PosixFileAttributes p && modes.exposed(p);
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
                    throw new FileLocker.Busy(guard, most, guard.getFileName() + " may be opened by users other than its"
                            + " writers (an older version left it so), and one of them may hold its lock:"
                            + " nothing tells that from a writer's; once it lets go, the next call replaces the guard"
                            + " with one that no reader can open");
                }
                throw busy;
            }
            refuseIfClosed(name); // closed while it waited for another process's lock: nothing written
            own = across.channel().isPresent() ? null : openLocked(name, guard, across);
            boolean linked = own != null && linked(guard, across);
            if (linked && across.file().isEmpty()) {
                // a lock that cannot tell its file from one renamed over it would not see the replacement either
                throw new LeaseCorruptException(name, guard.getFileName() + " has other names (hard links): nothing"
                        + " was written to it; remove it by hand to go on");
            }
            if (own != null && (linked || exposed && fileKey != null && fileKey.equals(
                    Files.readAttributes(guard, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey()))) {
                Optional<FileLocker.Lock> replaced = replaceGuard(name, guard, own, linked);
                if (replaced.isPresent()) {
                    FileLocker.Lock old = across;
                    FileChannel oldChannel = own;
                    across = replaced.get();
                    own = null;
                    closeAll(oldChannel, old);
                    own = openLocked(name, guard, across);
                }
            }
            if (own != null && found instanceof PosixFileAttributes p) {
                // through the descriptor where it can be: a file renamed to the guard's name since is not changed
                Optional<Path> locked = across.file().filter(f -> f.startsWith("/proc"));
                modes.shareGuard(locked.orElse(guard), p, locked.isPresent() ? new LinkOption[0]
                        : new LinkOption[] {LinkOption.NOFOLLOW_LINKS});
            }
            return work.run(new ChannelGuard(name, own != null ? own : across.channel().get()));
        } catch (AccessDeniedException e) {
            if (modes.sticky() && guard.toString().equals(e.getFile()) && !Files.isWritable(guard)) {
                AccessDeniedException told = new AccessDeniedException(e.getFile(), null, "the guard is not writable"
                        + " here: in a directory with the sticky bit each file is writable by its maker alone, so a"
                        + " lease one user took cannot be taken by another; share a group-writable directory without it");
                told.initCause(e);
                throw told;
            }
            IOException why = linkInPlace(name, guard, e);
            if (why == e && guard.toString().equals(e.getFile()) && found instanceof PosixFileAttributes p
                    && !Files.isWritable(guard)) {
                AccessDeniedException told = new AccessDeniedException(e.getFile(), null, "the guard is not writable by"
                        + " this user (" + PosixFilePermissions.toString(p.permissions()) + ", owner " + p.owner().getName()
                        + ", group " + p.group().getName() + "): until its owner's next call here, or its owner or root"
                        + " (chmod g+w, chgrp to the directory's group), makes it writable by the directory's group"
                        + " again, no other user can take, wait for or break the lease");
                told.initCause(e);
                throw told;
            }
            throw why;
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
     * Renames a fresh, locked copy over a guard non-writers may hold open (0644 from an older version, or another
     * group), then forces the directory so a power loss never brings the old one back. An old descriptor then holds
     * nobody out: every locker checks it locked the file at the path ({@link FileLocker#lock}). A failed step leaves
     * the old guard, still locked; a {@code linked} guard is never written (the copy holds its fence, else
     * {@link #LINKED}) and a failed step throws. Returns the new guard's lock, held: the caller lets the old one go.
     */
    private Optional<FileLocker.Lock> replaceGuard(String name, Path guard, FileChannel old, boolean linked)
            throws IOException {
        byte[] content;
        if (linked) {
            // maybe another's file: never written, its bytes never copied nor quoted (no fence: see LINKED)
            byte[] held = old.size() <= MAX_GUARD_BYTES ? readAll(old) : null;
            content = held != null && isFence(name, held) ? held : (LINKED + "\n").getBytes(StandardCharsets.US_ASCII);
        } else if (old.size() > MAX_GUARD_BYTES) {
            return Optional.empty(); // corrupt: break rewrites it first
        } else {
            content = readAll(old);
        }
        FileLocker.Lock[] lock = new FileLocker.Lock[1];
        try {
            // nobody else locks a temporary file
            writeOver(name, guard, content, true, tmp -> lock[0] = locker.lock(tmp, Duration.ZERO));
        } catch (IOException e) {
            if (lock[0] != null) {
                lock[0].close();
            }
            if (linked) {
                throw e; // never written in its place: call again once it can be replaced
            }
            return Optional.empty();
        }
        forceDirectory();
        if (linked) {
            return Optional.of(lock[0]); // nothing written to a file with other names
        }
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

    /** Fair: a looping thread keeps none out. Sliced on the monotonic clock, so a clock stepped back stretches none. */
    private void lockInJvm(String name, ReentrantLock inJvm, Path guard, Duration most, Elapsed waited) throws IOException {
        try {
            while (!inJvm.tryLock(Math.max(0, Math.min(waited.leftNanos(), LOCK_SLICE_NANOS)), TimeUnit.NANOSECONDS)) {
                if (waited.leftNanos() <= 0) {
                    throw FileLocker.Busy.inThisProcess(guard, most);
                }
                refuseIfClosed(name); // a wait for the lock is no write under way: it ends with the close
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the lock on " + guard);
        }
    }

    /**
     * The guard, created owner-only if missing; a shared one with the wrong group or permissions is given them, unless
     * {@linkplain FileModes#exposed exposed}: then only its replacement ({@link #replaceGuard}) shuts out old opens.
     */
    private BasicFileAttributes guardAttributes(String name, Path guard) throws IOException {
        for (int attempt = 0; ; attempt++) {
            try {
                Class<? extends BasicFileAttributes> kind = modes.guardsShared() ? PosixFileAttributes.class
                        : BasicFileAttributes.class;
                BasicFileAttributes a = Files.readAttributes(guard, kind, LinkOption.NOFOLLOW_LINKS);
                refuseNonRegular(name, guard, a);
                return a;
            } catch (NoSuchFileException e) {
                if (attempt > 0) {
                    throw e;
                }
                try {
                    Files.newByteChannel(guard, CREATE_NEW, modes.createAs()).close();
                    modes.share(guard, true);
                } catch (FileAlreadyExistsException raced) {
                    // another process made it: read it again
                }
            }
        }
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

        /** A guard found below the record's fence (restored by hand) is raised to it. */
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
            replace(granted); // the record first: one killed before the guard's write is no rolled-back record
            return granted;
        }

        @Override
        public void remove() throws IOException {
            delete(name, dir.resolve(name + ".lease"), "record");
            forceDirectory();
            record = Optional.empty();
        }

        @Override
        public Instant freshUntil(LeaseRecord r) throws IOException {
            Optional<Duration> fsAhead = fileSystemAhead(name);
            Instant now = clock.instant();
            Instant own = SessionFiles.believed(dir.resolve(name + ".lease"), r.renewedAt(), now, fsAhead).plus(r.ttl());
            return SessionFiles.renewedAt(dir, name, r.fence(), now, fsAhead, locker).map(at -> at.plus(r.ttl()))
                    .filter(own::isBefore).orElse(own);
        }

        /**
         * Longest-waiting first. Only fairness rests on it: a line that is no ticket (damaged, or edited by hand) is
         * skipped and the others keep their places (its waiter rejoins at the end as it waits on); past 16 such lines
         * the rest is not read, as this runs under the lock. A queue file that cannot be read, or holds more than 1 MiB,
         * reads as empty.
         */
        @Override
        public List<Waiter> waiters() throws IOException {
            Path file = dir.resolve(name + ".queue");
            List<Waiter> queue = new ArrayList<>();
            if (!present(name, file)) {
                return queue;
            }
            byte[] bytes;
            try {
                bytes = locker.read(file, MAX_RECORD_BYTES);
            } catch (IOException | RuntimeException e) {
                return queue;
            }
            if (bytes.length > MAX_RECORD_BYTES) {
                return queue;
            }
            CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder(); // strict: a line not UTF-8 is no ticket
            int bad = 0;
            for (int from = 0, to = 0; to <= bytes.length && bad <= BAD_LINES; to++) {
                if (to == bytes.length || bytes[to] == '\n') { // never inside a UTF-8 sequence
                    try {
                        String line = utf8.decode(ByteBuffer.wrap(bytes, from, to - from)).toString();
                        if (!line.isBlank()) {
                            queue.add(LeaseJson.waiter(line));
                        }
                    } catch (IOException | RuntimeException notATicket) {
                        bad++;
                    }
                    from = to + 1;
                }
            }
            return queue;
        }

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
            writeOver(name, file, text.toString().getBytes(StandardCharsets.UTF_8), false, tmp -> { });
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
         * A fence only grows: new digits cover old, so a kill leaves either. Forced before a grant returns or a child
         * starts: never handed out twice, even across a power loss.
         */
        private void fence(long fence) throws IOException {
            byte[] digits = Long.toString(fence).getBytes(StandardCharsets.US_ASCII);
            channel.write(ByteBuffer.wrap(digits), 0);
            channel.truncate(digits.length);
            channel.force(false);
            known = fence;
        }
    }

    private static long guardFence(String name, SeekableByteChannel channel) throws IOException {
        long size = channel.size();
        if (size > MAX_GUARD_BYTES) {
            throw corruptGuard(name, size + " bytes");
        }
        return guardFence(name, readAll(channel));
    }

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

    private static boolean isFence(String name, byte[] bytes) throws IOException {
        try {
            guardFence(name, bytes);
            return true;
        } catch (LeaseCorruptException notAFence) {
            return false;
        }
    }

    private static LeaseCorruptException corruptGuard(String name, String holds) {
        return new LeaseCorruptException(name, "the guard holds " + holds + ", not a fence of 0 to " + Long.MAX_VALUE
                + "; break the lease to go on (proclive lease break " + name + "): the guard is rewritten with the"
                + " highest fence the record proves, and fences go on above it");
    }

    /**
     * Read unlocked (a fence only grows); empty with no guard or one this process may not read (writers only). A
     * non-fence is not quoted: its name may have been linked to another's file as it was read (locked: replaced first).
     */
    @Override
    public OptionalLong highestFence(String name) throws IOException {
        Path guard = dir.resolve(name + ".guard");
        if (!present(name, guard)) {
            return OptionalLong.empty();
        }
        byte[] bytes;
        try {
            bytes = readFound(name, guard, MAX_GUARD_BYTES);
        } catch (NoSuchFileException | java.nio.file.AccessDeniedException e) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(guardFence(name, bytes));
        } catch (LeaseCorruptException corrupt) {
            throw corruptGuard(name, bytes.length > MAX_GUARD_BYTES ? "more than " + MAX_GUARD_BYTES + " bytes"
                    : bytes.length + " bytes of something else");
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
     * Identity, time and size, unfollowed; {@link #ABSENT} when there is none; empty where the platform names no file
     * identity. Each replace moves a new file in: the identity changes (or time and size, on inode reuse).
     */
    @Override
    public Optional<Object> stamp(String name) throws IOException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(dir.resolve(name + ".lease"), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return Optional.of(ABSENT);
        }
        return a.fileKey() == null ? Optional.empty()
                : Optional.of(List.of(a.fileKey(), a.lastModifiedTime(), a.size(), a.isRegularFile()));
    }

    /** Unless the directory is forced a power loss may lose the latest record, never a fence: the guard is forced. */
    private void replace(String name, LeaseRecord record) throws IOException {
        long confirmedAt = SessionFile.nanosAsOf(record.renewedAt(), record.ttl(), clock); // not when a slow write lands
        writeOver(name, dir.resolve(name + ".lease"), LeaseJson.stored(record), false, tmp -> beforeReplace.run());
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
        confirmed.put(name, new Confirmed(record.fence(), confirmedAt, record.ttl().toNanos(), record.renewedAt(), written));
    }

    /** Via a forced temporary file renamed over {@code file}: readers see old or new, on disk before it is named. */
    private void writeOver(String lease, Path file, byte[] bytes, boolean guard,
                           BeforeMove beforeMove) throws IOException {
        Path tmp = null;
        try {
            for (int attempt = 0; tmp == null; attempt++) {
                Path candidate = dir.resolve(TemporaryName.of(lease, writer).toString());
                try (FileChannel out = FileChannel.open(candidate, CREATE_NEW, modes.createAs())) {
                    tmp = candidate;
                    modes.share(tmp, guard);
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

    /** A link itself, never what it points to, or an empty directory; a directory not empty is corrupt. */
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

    /** A pass that fails is left for the next write, which lists the directory again. */
    private void cleanTemporaryFilesWhenDue() {
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
                    cleaned = false;
                }
            }
        }
    }

    private void cleanTemporaryFiles() throws IOException {
        long deadline = System.nanoTime() + CLEAN_BUDGET_NANOS;
        SessionFiles.clean(dir, provenDead, () -> fileSystemNow(SessionFile.TEMPORARY), locker, deadline);
        DirectoryStream.Filter<Path> temporary = p -> {
            String file = p.getFileName().toString();
            return file.startsWith(".") && file.endsWith(".tmp"); // a glob would compile a regex each time
        };
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, temporary)) {
            for (Path file : files) {
                if (System.nanoTime() - deadline > 0) {
                    return;
                }
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

    /**
     * How far the clock stamping this directory's changes (a file server's, or the kernel's, which a process's clock may
     * not follow) is ahead of the store's: {@link #fileSystemNow} less the store's clock read after (a floor a little
     * late, never early). Empty where no file can be made or the store's clock is not the system's.
     */
    private Optional<Duration> fileSystemAhead(String lease) {
        if (!clock.withZone(java.time.ZoneOffset.UTC).equals(Clock.systemUTC())) {
            return Optional.empty();
        }
        return fileSystemNow(lease).map(fsNow -> Duration.between(clock.instant(), fsNow));
    }

    /** The time on the clock that stamps this directory's changes, told by making a temporary file of {@code lease}. */
    private Optional<Instant> fileSystemNow(String lease) {
        Path probe = dir.resolve(TemporaryName.of(lease, writer).toString());
        try {
            Files.newByteChannel(probe, CREATE_NEW, modes.createAs()).close();
            try {
                return Optional.of(SessionFiles.changedAt(probe));
            } finally {
                deleteQuietly(probe);
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException | UncheckedIOException e) {
            // left for the next writer, which removes a dead writer's files
        }
    }

    private static byte[] readAll(SeekableByteChannel in) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) in.size());
        in.position(0);
        while (b.hasRemaining() && in.read(b) >= 0) {
            // read it all
        }
        return b.array();
    }

    /** The guard as locked: via the lock's path to its file if any, so no file renamed to its name since is written. */
    private static FileChannel openLocked(String name, Path guard, FileLocker.Lock lock) throws IOException {
        Optional<Path> locked = lock.file();
        if (locked.isPresent()) {
            try {
                return FileChannel.open(locked.get(), StandardOpenOption.READ, StandardOpenOption.WRITE);
            } catch (IOException notHere) {
                // a /proc that refuses it: opened by name
            }
        }
        try {
            return FileChannel.open(guard, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw linkInPlace(name, guard, e);
        }
    }

    /**
     * Whether the locked file has other names (hard links: where {@code fs.protected_hardlinks} is 0 anyone may link
     * another's file into the store): then replaced, never written. The guard's name must still be the locked file's.
     */
    private static boolean linked(Path guard, FileLocker.Lock lock) throws IOException {
        Map<String, Object> at;
        Map<String, Object> locked;
        try {
            at = Files.readAttributes(guard, "unix:ino,dev,nlink", LinkOption.NOFOLLOW_LINKS);
        } catch (UnsupportedOperationException | IllegalArgumentException noUnixView) {
            return false;
        }
        try {
            locked = lock.file().isPresent() ? Files.readAttributes(lock.file().get(), "unix:ino,dev,nlink") : at;
        } catch (IOException notHere) {
            locked = at; // a /proc that refuses it: the guard was opened by name too
        }
        if (!at.get("ino").equals(locked.get("ino")) || !at.get("dev").equals(locked.get("dev"))) {
            throw new IOException(guard + " was replaced while it was locked, though nothing replaces a locked guard:"
                    + " nothing was written; call again");
        }
        return ((Integer) locked.get("nlink")) > 1;
    }

    /**
     * A non-regular file put in the file's place after it was found (a link: ELOOP, a plain {@link IOException} from
     * the JDK; a directory: EISDIR; a socket: ENXIO) makes a failed unfollowed open or read a corrupt lease.
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

    /** Where none were read, it is looked at again: a FIFO put in its place after it was found reads as empty. */
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

    private static boolean present(String name, Path file) throws IOException {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            refuseNonRegular(name, file, a);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    /** {@code break} removes what stands at the record or the queue; at the guard it cannot lock, so nothing can. */
    private static void refuseNonRegular(String name, Path file, BasicFileAttributes a) throws LeaseCorruptException {
        if (!a.isRegularFile()) {
            String what = a.isSymbolicLink() ? "a symbolic link" : a.isDirectory() ? "a directory" : "something other than a file";
            String fix = file.getFileName().toString().endsWith(".guard") ? "remove it by hand to go on"
                    : "break the lease to go on (proclive lease break " + name + "), which removes it"
                    + (a.isDirectory() ? " if it is empty (one with files in it is removed by hand)" : "");
            throw new LeaseCorruptException(name, what + " stands where " + file.getFileName() + " should be; " + fix);
        }
    }
}
