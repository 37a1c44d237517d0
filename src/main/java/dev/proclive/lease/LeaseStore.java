package dev.proclive.lease;

import dev.proclive.lease.book.Records;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.text.StrictJson;
import dev.proclive.lease.book.LeaseNames;
import dev.proclive.lease.core.LeaseEngine;
import dev.proclive.lease.core.Pause;
import dev.proclive.lease.etcd.EtcdBook;
import dev.proclive.etcd.Etcd;
import dev.proclive.etcd.EtcdGateway;
import dev.proclive.etcd.RevisionMarks;
import dev.proclive.lease.files.LeaseFiles;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.text.OneLine;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Named single-writer leases, each held by a process identity, kept in a directory on this machine
 * ({@link Builder#directory(Path)}, {@link #open(Path)}) or in etcd for holders on several machines
 * ({@link Builder#etcd(List)}), with the same methods and rules.
 *
 * <pre>{@code
 * LeaseStore store = LeaseStore.open(Path.of(".state/leases"));
 * if (store.spawn("build", new ProcessBuilder("make")) instanceof Acquisition.Started started) {
 *     started.process().waitFor();       // the child holds the lease; this process may exit any time
 * }                                      // the record says "exited", with make's status
 * }</pre>
 *
 * <p>A lease is granted when free (no record, or a released one), again to the same holder (same fence:
 * {@link Acquisition.Granted#again()}), and at once over a holder proven DEAD (exited, a zombie, its PID reused, the
 * machine rebooted; the old holder and verdict kept in the record's {@code previous}). Never from an ALIVE holder; an
 * UNKNOWN one keeps it unless the {@link LeasePolicy} takes UNKNOWN over and the record was not renewed for its TTL.
 * Each new grant's fence is one higher than any before, also after a release, a {@link #breakLease break} or the
 * record's deletion by hand. A lease excludes other <em>holders</em>: two processes acting for one holder (two hooks of
 * one agent) share it.
 *
 * <p>{@link #spawn} {@linkplain #reserve reserves} the lease, starts the writer with the reservation in its environment
 * and {@linkplain Lease#handOff hands it off}; if the launcher dies first, the child {@linkplain #claim claims} it. A
 * newcomer finding the reserver not ALIVE makes the process on this host carrying the token the holder; only a complete
 * scan that finds none (the reserver DEAD) frees it.
 *
 * <p>In a directory: {@code NAME.lease}, the record, replaced atomically (a writer killed at any step leaves the old
 * one or the new); {@code NAME.guard}, never deleted, the highest fence granted; {@code .NAME.PID-START.RANDOM.tmp}, a
 * record being written; {@code NAME.queue}, the waiters' tickets. A directory the store creates is 0700; files are 0600
 * where the directory grants no group or other access. In a shared directory each file gets, past the umask, read and
 * write for each class of users that may write the directory and read for one that may only read it (no access to the
 * guard), so a hook and its agent running as different users can share a group-writable one (records 0664, guards 0660
 * in a {@code 02775} directory).
 *
 * <p>Judging and writing happen one at a time, within a JVM (two paths to one directory share a lock) and across
 * processes: {@code flock(2)} ({@code LockFileEx} on Windows; JNA on Linux and macOS) on a descriptor of the store's
 * own, which other code closing the guard, a second copy of this library or a bind mount cannot drop. It needs write
 * access (a reader cannot hold writers out) and is waited for no longer than the caller waits (5 s without a wait,
 * {@link #breakLease} included): a process stopped while holding it makes the others fail with an {@link IOException},
 * never hang. Instances are thread-safe.
 *
 * <p>Not promised: holders on other hosts are never judged DEAD, only UNKNOWN; a sticky directory (such as
 * {@code /tmp}) cannot pass a lease between users, since the kernel lets only a record's maker replace it there.
 */
public final class LeaseStore implements AutoCloseable {

    /** The environment variables a spawned process finds its reservation in. */
    public static final String TOKEN_VARIABLE = LeaseNames.TOKEN_VARIABLE;
    /** The lease's name, in a spawned process's environment. */
    public static final String NAME_VARIABLE = LeaseNames.NAME_VARIABLE;
    /** The store's directory, absolute, in a spawned process's environment. */
    public static final String DIR_VARIABLE = LeaseNames.DIR_VARIABLE;
    /** The reservation's fence, in a spawned process's environment. */
    public static final String FENCE_VARIABLE = LeaseNames.FENCE_VARIABLE;
    /** The endpoints of a store on etcd, comma-separated (never a password), in a spawned process's environment. */
    public static final String ETCD_VARIABLE = EtcdBook.ETCD_VARIABLE;
    /** The key prefix of a store on etcd, in a spawned process's environment. */
    public static final String PREFIX_VARIABLE = EtcdBook.PREFIX_VARIABLE;
    /** The key prefix a store on etcd uses unless told another. */
    public static final String DEFAULT_PREFIX = "proclive/leases/";

    /** How long one call to etcd may take before the next endpoint is tried. */
    private static final Duration ETCD_CALL = Duration.ofSeconds(5);

    private final LeaseEngine engine;
    private final Optional<LeaseFiles> files;

    private LeaseStore(LeaseEngine engine, Optional<LeaseFiles> files) {
        this.engine = engine;
        this.files = files;
    }

    /** The files, for tests in this package. */
    LeaseFiles files() {
        return files.orElseThrow();
    }

    /**
     * {@code builder().directory(dir).build()}: a store over {@code dir}, created if missing, with the default policy.
     *
     * @throws NullPointerException  if {@code dir} is null
     * @throws NotDirectoryException if {@code dir} exists and is not a directory
     * @throws IOException           if it cannot be created or resolved
     */
    public static LeaseStore open(Path dir) throws IOException {
        return builder().directory(dir).build();
    }

    /**
     * A store to be built: over a {@linkplain Builder#directory directory} or on {@linkplain Builder#etcd etcd}.
     *
     * <pre>{@code
     * LeaseStore files = LeaseStore.builder().directory(Path.of(".state/leases")).build();
     * LeaseStore shared = LeaseStore.builder()
     *         .etcd(List.of(URI.create("https://10.0.0.5:2379")))
     *         .prefix("ci/leases/")
     *         .caFile(Path.of("/etc/etcd/ca.pem"))
     *         .credentials("ci", password)
     *         .policy(LeasePolicy.builder().ttl(Duration.ofSeconds(15)).build())
     *         .build();
     * }</pre>
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * How a store is made: where its records live (a directory, or etcd with its prefix, trust and login) and the
     * policy it grants by. Not thread-safe; each {@link #build()} makes a new store.
     */
    public static final class Builder {

        private Optional<Path> directory = Optional.empty();
        private Optional<List<URI>> endpoints = Optional.empty();
        private Optional<String> prefix = Optional.empty();
        private Optional<Path> caFile = Optional.empty();
        private Optional<String> user = Optional.empty();
        private char[] password = new char[0];
        private Optional<Path> revisionMarks = Optional.empty();
        private LeasePolicy policy = LeasePolicy.defaults();
        // The seams for tests in this package: what judges, what tells time, how a wait waits, what tracks a spawn.
        private Optional<LivenessChecker> checker = Optional.empty();
        private Clock clock = Clock.systemUTC();
        private Pause pause = Pause.REAL;
        private Optional<Descendants> descendants = Optional.empty();
        private Optional<Etcd> etcdClient = Optional.empty();

        private Builder() {
        }

        /**
         * The leases are files in {@code dir}, created (owner-only, on POSIX) if missing: for holders on this machine
         * (and others sharing the directory, judged UNKNOWN).
         */
        public Builder directory(Path dir) {
            this.directory = Optional.of(Objects.requireNonNull(dir, "dir"));
            return this;
        }

        /**
         * The leases live in etcd (v3, through its JSON gateway): a record expires when nobody keeps it alive, and
         * lease {@code NAME} is key {@code PREFIX NAME}, its fence the {@code mod_revision} of
         * {@code PREFIX NAME.fence} (never deleted; no lease name ends in {@code .fence}). A holder on another machine
         * is {@link Acquisition.Undecided} until its record expires. A member cut off from its majority grants nothing;
         * no member answering is an {@link IOException}.
         *
         * @param endpoints {@code http://HOST:PORT} or {@code https://HOST:PORT} of the members, tried in turn; a user
         *                  or password goes in {@link #credentials}, never in a URI
         * @throws IllegalArgumentException if {@code endpoints} is empty, or one is not of that form
         */
        public Builder etcd(List<URI> endpoints) {
            List<URI> given = List.copyOf(Objects.requireNonNull(endpoints, "endpoints"));
            if (given.isEmpty()) {
                throw new IllegalArgumentException("an etcd store needs at least one endpoint");
            }
            for (URI e : given) {
                if (e.getRawUserInfo() != null) {
                    throw new IllegalArgumentException("an etcd endpoint names no user or password: give them to"
                            + " credentials(user, password), and the endpoint as http(s)://HOST:PORT");
                }
            }
            this.endpoints = Optional.of(given);
            return this;
        }

        /** The start of every key a store on etcd writes (default {@value LeaseStore#DEFAULT_PREFIX}). */
        public Builder prefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.isEmpty()) {
                throw new IllegalArgumentException("an etcd store needs a key prefix, such as " + DEFAULT_PREFIX);
            }
            this.prefix = Optional.of(prefix);
            return this;
        }

        /** PEM certificates to verify {@code https} members with, instead of the JVM's trust store. */
        public Builder caFile(Path caFile) {
            this.caFile = Optional.of(Objects.requireNonNull(caFile, "caFile"));
            return this;
        }

        /**
         * Logs in to etcd as {@code user} with {@code password}, which is copied (clear your array once this returns)
         * and never put in a spawned command's environment.
         */
        public Builder credentials(String user, char[] password) {
            Objects.requireNonNull(user, "user");
            Objects.requireNonNull(password, "password");
            if (user.isEmpty()) {
                throw new IllegalArgumentException("an etcd user has a name");
            }
            this.user = Optional.of(user);
            this.password = password.clone();
            return this;
        }

        /**
         * Where a store on etcd keeps the highest revision it saw of each cluster (default: {@code $PROCLIVE_STATE_DIR}
         * if absolute, else none). A later store refuses a cluster below its mark, restored from an older copy, whose
         * fences would repeat ones handed out (one wiped and remade with the same member names and addresses keeps its
         * id: refused until its mark is deleted). Made owner-only if missing; one that is a link, another user's or
         * writable by others is not used, and nothing fails for want of it.
         */
        public Builder revisionMarks(Path dir) {
            this.revisionMarks = Optional.of(Objects.requireNonNull(dir, "dir"));
            return this;
        }

        /** The policy grants follow (default {@link LeasePolicy#defaults()}). */
        public Builder policy(LeasePolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        Builder checker(LivenessChecker checker) {
            this.checker = Optional.of(checker);
            return this;
        }

        Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        Builder pause(Pause pause) {
            this.pause = pause;
            return this;
        }

        Builder descendants(Descendants descendants) {
            this.descendants = Optional.of(descendants);
            return this;
        }

        /** A store on this client of etcd, for tests in this package. */
        Builder etcdClient(Etcd etcd) {
            this.etcdClient = Optional.of(etcd);
            return this;
        }

        /**
         * The store.
         *
         * @throws IllegalStateException if neither a directory nor etcd was given, or both were, or etcd's options were
         *                               given to a store over a directory
         * @throws NotDirectoryException if the directory exists and is not a directory
         * @throws IOException           if the directory cannot be created or resolved, or the CA file cannot be read
         */
        public LeaseStore build() throws IOException {
            boolean onEtcd = endpoints.isPresent() || etcdClient.isPresent();
            if (directory.isPresent() == onEtcd) {
                throw new IllegalStateException(onEtcd ? "a lease store is over a directory or on etcd, not both"
                        : "a lease store needs directory(Path) or etcd(List<URI>)");
            }
            if (!onEtcd && (prefix.isPresent() || caFile.isPresent() || user.isPresent() || revisionMarks.isPresent())) {
                throw new IllegalStateException("prefix, caFile, credentials and revisionMarks are for a store on etcd,"
                        + " not over a directory");
            }
            LivenessChecker judge = checker.orElseGet(LivenessChecker::system);
            Descendants tracks = descendants.orElseGet(Platform::descendants);
            Identity self = self(judge);
            if (directory.isPresent()) {
                LeaseFiles files = LeaseFiles.open(directory.get(), self, id -> judge.check(id) == Liveness.DEAD,
                        judge.introspector().bootId().isEmpty(), Platform.fileLocker());
                files.clock(clock);
                return new LeaseStore(new LeaseEngine(files, policy, self, judge, clock, pause, tracks), Optional.of(files));
            }
            Etcd etcd = etcdClient.isPresent() ? etcdClient.get() : EtcdGateway.open(endpoints.get(), caFile,
                    user.map(u -> new EtcdGateway.Login(u, password.clone())), ETCD_CALL, StrictJson.mapper(),
                    revisionMarks.map(RevisionMarks::in).orElseGet(RevisionMarks::forUser));
            EtcdBook book = new EtcdBook(etcd, prefix.orElse(DEFAULT_PREFIX), clock, user.orElse(""));
            return new LeaseStore(new LeaseEngine(book, policy, self, judge, clock, pause, tracks), Optional.empty());
        }
    }

    /** This process, as every record it writes names its writer. */
    private static Identity self(LivenessChecker checker) {
        return checker.current().orElseGet(() -> new Identity(ProcessHandle.current().pid(), "", "", "", "", ""));
    }

    /** The directory, resolved, of a store over one; empty for a store on etcd. */
    public Optional<Path> directory() {
        return files.map(LeaseFiles::directory);
    }

    /** The policy acquisitions follow. */
    public LeasePolicy policy() {
        return engine.policy();
    }

    /**
     * Lets go of what this store holds open (twice does nothing more). Its grants are kept no longer, nor released
     * (release them first). On etcd they expire after their TTL (ended records stay as they are), and each lease still
     * held through it is told so now ({@link Lease#lost()} completes, {@code UNCONFIRMED}), not once another may be
     * granted it. Over a directory its grants stay fresh for their TTL; its waiters' places in the queues are taken out
     * (what cannot be within 2 s for their locks lapses at its waiter's deadline); a call that would lock a lease (a
     * wait, a release) throws {@link IllegalStateException}; writes under way are waited for (5 s at most for the
     * session file's, as long again for the others): nothing lands in the directory after this returns, nor is a
     * spawned command's end written. On either, {@code acquire}, {@code reserve}, {@code claim} and {@code spawn} throw
     * {@link IllegalStateException}, a wait under way too, since nothing would keep the grant or tell its loss.
     */
    @Override
    public void close() {
        engine.close();
    }

    /**
     * Takes lease {@code name} for {@code holder}, or tells why not.
     *
     * @param holder the process the lease is for; it need not be the calling one (a hook takes a lease for its owner),
     *               but it must be ALIVE now, else {@link Acquisition.NotAlive}
     * @throws IllegalArgumentException if {@code name} is not a lease name
     * @throws LeaseCorruptException    if the record or guard cannot be trusted, or the lease has granted its last
     *                                  fence; nothing is changed
     * @throws IOException              if the files cannot be read or written
     */
    public Acquisition acquire(String name, Identity holder) throws IOException {
        checkName(name);
        Objects.requireNonNull(holder, "holder");
        return engine.acquire(name, holder);
    }

    /**
     * Like {@link #acquire(String, Identity)}, but while another holder is ALIVE, or {@link Acquisition.Undecided} with
     * an {@code eligibleAt} within the wait, waits up to {@code wait} (an exit is seen at once,
     * {@link LivenessChecker#onExit}; a release without an exit within 2 s), then judges again. Waiters are served in
     * the order they came; at the deadline it returns what it finds then.
     *
     * @throws InterruptedIOException if the thread is interrupted while waiting
     * @throws IllegalStateException  if a store over a directory is closed, also while this waits (its place in the
     *                                queue is then taken out, or lapses at the deadline)
     */
    public Acquisition acquire(String name, Identity holder, Duration wait) throws IOException {
        Objects.requireNonNull(wait, "wait");
        return engine.waiting(name, holder, wait, () -> acquire(name, holder));
    }

    /**
     * Reserves lease {@code name}, judged as {@link #acquire}, for a process about to start:
     * {@link LeaseRecord.State#RESERVED reserved} to {@code reserver} (the live process responsible for it, usually the
     * caller), with a new {@link Lease#token() token} to start the process with before
     * {@link Lease#handOff handing it off}.
     *
     * @throws IllegalArgumentException if {@code name} is not a lease name
     * @throws IOException              as for {@link #acquire}
     */
    public Acquisition reserve(String name, Identity reserver) throws IOException {
        checkName(name);
        Objects.requireNonNull(reserver, "holder");
        return engine.reserve(name, reserver);
    }

    /** {@link #reserve(String, Identity)}, waiting as {@link #acquire(String, Identity, Duration)} does. */
    public Acquisition reserve(String name, Identity reserver, Duration wait) throws IOException {
        Objects.requireNonNull(wait, "wait");
        return engine.waiting(name, reserver, wait, () -> reserve(name, reserver));
    }

    /**
     * The spawned process's side, for when its launcher died before handing the lease off: the reservation with
     * {@code token} becomes {@code holder}'s, fence kept. {@code holder}'s initial environment must hold
     * {@code PROCLIVE_LEASE_TOKEN=token}, else {@link Acquisition.NotCarrier}, nothing read or written (an environment
     * that cannot be read proves nothing: the claim is judged as a newcomer's). Already {@code holder}'s: granted
     * again. Otherwise judged as {@link #acquire} judges a newcomer, except that a claim never takes over (that is
     * {@link Acquisition.Undecided}: acquire it instead).
     *
     * @param token the reservation's token, from {@code PROCLIVE_LEASE_TOKEN}
     * @throws IllegalArgumentException if {@code name} is not a lease name or {@code token} is not 32 lowercase hex
     *                                  digits
     * @throws IOException              as for {@link #acquire}
     */
    public Acquisition claim(String name, String token, Identity holder) throws IOException {
        checkToken(token);
        checkName(name);
        Objects.requireNonNull(holder, "holder");
        return engine.claim(name, token, holder);
    }

    /**
     * The process a reservation's token was started in: the outermost of this process and its unbroken line of
     * ancestors that carry {@code token} in their initial environment, or empty if this process does not. The holder to
     * {@link #claim} for from below the spawned command (a hook it runs, or the command after {@code exec}).
     *
     * @throws IllegalArgumentException if {@code token} is not 32 lowercase hex digits
     */
    public Optional<Identity> carrierOf(String token) {
        checkToken(token);
        return engine.carrierOf(token);
    }

    private static void checkToken(String token) {
        Objects.requireNonNull(token, "token");
        if (!Records.isToken(token)) {
            throw new IllegalArgumentException("a reservation's token is 32 lowercase hex digits, not "
                    + OneLine.quote(token));
        }
    }

    /**
     * Reserves lease {@code name} for {@code command}, starts it with the reservation in its environment
     * ({@code PROCLIVE_LEASE_TOKEN}, {@code _NAME}, {@code _DIR}, {@code _FENCE}) and hands the lease to it, fence
     * kept: the caller may exit any time after this returns. How the lease ends when the child exits:
     * {@link Acquisition.Started}; {@link Lease#exited} is for a caller that waits itself. What the command leaves
     * behind holds the lease until it ends too (how that end is proven: {@link LeasePolicy#trackDescendants(boolean)}).
     * If the command cannot be started the reservation ends as {@code spawn_failed} and the exception is thrown. While
     * the lease is reserved by a live process (this one included) another spawn is {@link Acquisition.Held}.
     *
     * @return {@link Acquisition.Started}, or the reservation's refusal as it answered ({@link Acquisition.Held},
     *         {@link Acquisition.Undecided}, {@link Acquisition.NotAlive}); never {@link Acquisition.Granted}
     * @throws IllegalArgumentException if {@code name} is not a lease name
     * @throws IOException              as for {@link #acquire} (before anything started), or as
     *                                  {@link ProcessBuilder#start()} throws
     */
    public Acquisition spawn(String name, ProcessBuilder command) throws IOException {
        return spawn(name, command, Duration.ZERO);
    }

    /** {@link #spawn(String, ProcessBuilder)}, waiting as {@link #acquire(String, Identity, Duration)} does. */
    public Acquisition spawn(String name, ProcessBuilder command, Duration wait) throws IOException {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(wait, "wait");
        checkName(name);
        return engine.spawn(name, command, wait);
    }

    /**
     * The record of lease {@code name}, or empty when there is none; takes no lock and needs no write access.
     *
     * @throws IllegalArgumentException if {@code name} is not a lease name
     * @throws LeaseCorruptException    if the record cannot be trusted
     * @throws IOException              if it cannot be read
     */
    public Optional<LeaseRecord> read(String name) throws IOException {
        checkName(name);
        return engine.read(name);
    }

    /**
     * Renews lease {@code name} at {@code fence}: its {@code renewedAt} becomes now, its TTL kept unless this store's
     * policy set one {@linkplain LeasePolicy#renewalTtl() explicitly}.
     *
     * @return the record written
     * @throws LeaseLostException if the record is missing, released, or at another fence
     * @throws IOException        as for {@link #acquire}
     */
    public LeaseRecord renew(String name, long fence) throws IOException {
        checkName(name);
        return engine.renew(name, fence, Optional.empty());
    }

    /**
     * Releases lease {@code name} at {@code fence}: the record, fence kept, says {@code released}.
     *
     * @return true if it is released at that fence now (also when it already was); false, and nothing written, when
     *         there is no record or it is at another fence
     * @throws IOException as for {@link #acquire}
     */
    public boolean release(String name, long fence) throws IOException {
        checkName(name);
        return engine.release(name, fence);
    }

    /**
     * The operator's override: releases lease {@code name} whoever holds it, fence kept (the next grant gets the one
     * after), ended as {@code broken} with the holder's verdict then. A record that cannot be trusted (not JSON,
     * self-contradicting, rolled back, or a link or directory in its place) is removed (on etcd its key deleted), the
     * fence kept above every fence granted. A name never taken is left as it is.
     *
     * @return the released record written; empty when there was no record, or the one there could not be trusted and
     *         was removed ({@link #read} threw {@link LeaseCorruptException} for it)
     * @throws IOException as for {@link #acquire}
     */
    public Optional<LeaseRecord> breakLease(String name) throws IOException {
        checkName(name);
        return engine.breakLease(name);
    }

    /**
     * Keeps the grants of this machine's holders, as {@code proclive lease keep} does, until interrupted or the store
     * is closed (then it returns once its poll under way ends): each granted record whose holder is ALIVE here is kept
     * fresh, and ended ({@code exited}, with the verdict) the moment its holder dies, so a newcomer anywhere is granted
     * at once instead of after the TTL; one whose holder is already DEAD here is ended when found.
     *
     * <p>It never gives up: each failure (a member not answering, an answer that cannot be read, a grant that cannot be
     * ended now) is said through {@code says}, whose first line tells that it keeps, and tried again after a pause that
     * grows to about a second; grants given up while etcd did not answer are kept again once it does, if still there.
     *
     * @param poll how often the grants are read again
     * @param says one line for a person at a time, from this thread
     * @throws InterruptedException when the thread is interrupted: the normal way to stop; the grants kept so far stay
     *                              kept until this JVM exits
     */
    public void keepHolders(Duration poll, Consumer<String> says) throws InterruptedException {
        Objects.requireNonNull(poll, "poll");
        Objects.requireNonNull(says, "says");
        engine.keepHolders(poll, says);
    }

    /**
     * Tells {@code listener}, in order and one call at a time ({@link LeaseListener}), each change of lease
     * {@code name}'s record from now on by any process ({@link LeaseChange#GRANTED} and each way a grant ends) once the
     * write is durable, and {@code HOLDER_DIED} when this machine sees the record's holder end. A directory's record is
     * looked at every 100 ms, an etcd record when its watch says it changed (and every second besides); a grant that
     * came and went between two looks is told as granted, then as ended.
     *
     * <pre>{@code
     * try (AutoCloseable w = store.watch("deploy", e -> System.out.println(e.kind() + " fence " + e.record().fence()))) {
     *     ...
     * }
     * }</pre>
     *
     * @return what stops the watch when closed (closing the store stops them all)
     * @throws IllegalArgumentException if {@code name} is not a lease name
     * @throws IllegalStateException    if the store is closed
     * @throws IOException              if the record cannot be read now
     */
    public AutoCloseable watch(String name, LeaseListener listener) throws IOException {
        checkName(name);
        Objects.requireNonNull(listener, "listener");
        return engine.watch(name, listener);
    }

    /**
     * Refuses what is not a lease name, touching nothing: 1 to 128 of {@code [A-Za-z0-9._-]}, not starting with
     * {@code .} or {@code -}. Every method that takes a name checks it this way.
     *
     * @throws NullPointerException     if {@code name} is null
     * @throws IllegalArgumentException naming the rule, if it is not a lease name
     */
    public static void checkName(String name) {
        LeaseNames.checkName(name);
    }
}
