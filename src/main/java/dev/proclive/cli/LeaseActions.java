package dev.proclive.cli;

import dev.proclive.lease.book.LeaseJson;
import dev.proclive.Identity;
import dev.proclive.OwnerResolver;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.LeaseStore;
import dev.proclive.lease.book.Records;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What each {@code proclive lease} action does with a command line {@link LeaseCommand} has
 * parsed: every action starts the same way ({@link Action#perform}: the name checked before the
 * store is touched, then the store opened, failures made exit codes), then makes its calls to
 * the store and says what they came to. Nothing here calls back up into the parser or
 * {@link Main}.
 */
final class LeaseActions {

    private LeaseActions() {
    }

    /** How often {@code lease keep} looks for grants made since. */
    private static final Duration KEEP_POLL = Duration.ofMillis(500);

    /** A lease command line, parsed before anything is touched. */
    record Request(Action action, String name, Store store, Optional<Long> holder, List<String> skip,
                   OptionalLong fence, Optional<Duration> ttl, boolean takeUnknown, Duration waitFor,
                   boolean printFence, Optional<String> token, List<String> command, boolean warnOnLost) {
    }

    /** Where the leases are: a directory, or etcd. */
    record Store(Optional<Path> dir, List<URI> etcd, String prefix, Optional<Path> ca, Optional<String> user,
                 Optional<String> password) {
    }

    /** Where an action speaks: its answer on {@code out}, a refusal or failure as one line on {@code err}. */
    record Io(PrintStream out, PrintStream err, Report report) {
        Io(PrintStream out, PrintStream err) {
            this(out, err, new Report(out, err));
        }
    }

    /** One action: its name, the options it takes besides where the store is, and what it does. */
    abstract static class Action {

        private final String name;
        private final List<Options.Spec> options;

        Action(String name, Options.Spec... options) {
            this.name = name;
            List<Options.Spec> specs = new java.util.ArrayList<>(List.of(Options.Spec.value("--dir"),
                    Options.Spec.value("--etcd"), Options.Spec.value("--prefix"), Options.Spec.value("--etcd-ca"),
                    Options.Spec.value("--etcd-password-file")));
            specs.addAll(List.of(options));
            this.options = List.copyOf(specs);
        }

        /** As the command line names it: {@code acquire}. */
        final String name() {
            return name;
        }

        /** Every option it takes: where the store is ({@code --dir}, or {@code --etcd} with {@code --prefix}, {@code --etcd-ca}), then its own. */
        final List<Options.Spec> options() {
            return options;
        }

        /** Whether it names a lease: all but {@code keep}, which keeps every grant under the prefix. */
        boolean named() {
            return true;
        }

        /** What it does and what its exit codes mean, for its {@code --help}: lines of at most 80 columns. */
        abstract String about();

        /** What follows its options on the usage line ({@code -- COMMAND [ARG]...} for {@code run}). */
        String trailer() {
            return "";
        }

        /**
         * Its {@code --help}: the usage line and one line per option, both made from its own option
         * table, then what it does.
         */
        final String help() {
            return LeaseHelp.of(name, named(), options, about(), trailer());
        }

        /**
         * Whether it starts a command and supervises it: then the kernel tracks what the command
         * starts ({@link LeasePolicy#trackDescendants(boolean)}). Only {@code run}.
         */
        boolean supervises() {
            return false;
        }

        /** Whether a lease directory that does not exist is created for it: only for those that grant. */
        boolean creates() {
            return false;
        }

        /**
         * Does it: the name is checked before the store is touched, the store opened, then
         * {@link #on}. When several apply, the first of name, directory, corrupt record wins.
         *
         * @return the exit code
         */
        final int perform(Request c, Io io) {
            try {
                if (named()) {
                    LeaseStore.checkName(c.name());
                }
            } catch (IllegalArgumentException e) {
                Say.line(io.err(), e.getMessage());
                return ExitCode.BAD_INPUT.code();
            }
            try {
                LeasePolicy policy = LeasePolicy.builder().takeUnknownAfterTtl(c.takeUnknown())
                        .trackDescendants(supervises());
                LeaseStore store;
                try {
                    store = open(c.store(), c.ttl().map(policy::ttl).orElse(policy));
                } catch (IllegalArgumentException e) {
                    Say.line(io.err(), e.getMessage() + " (see proclive lease " + name + " --help)");
                    return ExitCode.USAGE.code();
                }
                try (store) { // what it holds open is let go; what it granted lives on for its TTL
                    return on(store, c, io);
                }
            } catch (LeaseCorruptException e) {
                Say.line(io.err(), e.getMessage());
                return ExitCode.BAD_INPUT.code();
            } catch (IllegalArgumentException e) {
                // a name this store refuses before it reads or writes anything (on etcd: one ending in .fence)
                Say.line(io.err(), e.getMessage());
                return ExitCode.BAD_INPUT.code();
            } catch (IOException e) {
                Say.line(io.err(), describe(e));
                return ExitCode.IO_FAILURE.code();
            } catch (java.io.UncheckedIOException e) {
                Say.line(io.err(), describe(e.getCause()));
                return ExitCode.IO_FAILURE.code();
            }
        }

        /** The store, for this action; a directory that does not exist is created only by those that grant. */
        private LeaseStore open(Store where, LeasePolicy policy) throws IOException {
            LeaseStore.Builder store = LeaseStore.builder().policy(policy);
            if (where.dir().isEmpty()) {
                store.etcd(where.etcd()).prefix(where.prefix());
                where.ca().ifPresent(store::caFile);
                where.user().ifPresent(u -> store.credentials(u, where.password().orElse("").toCharArray()));
                return store.build();
            }
            if (!creates() && !Files.isDirectory(where.dir().get())) {
                throw new NoSuchFileException(where.dir().get().toString(), null, "no such lease directory");
            }
            return store.directory(where.dir().get()).build();
        }

        /** What this action does with the open store; its exit code. */
        abstract int on(LeaseStore store, Request c, Io io) throws IOException;
    }

    /** Every action, in the order usage lists them. */
    static final List<Action> ALL = List.of(new Acquire(), new Renew(), new Release(), new Show(), new Break(),
            new Claim(), new Run(), new Keep());

    /** An I/O failure in words, without Java's type names: the file, then what went wrong with it. */
    static String describe(IOException e) {
        if (e instanceof java.nio.file.FileSystemException f) {
            String kind = e instanceof NoSuchFileException ? "no such file or directory"
                    : e instanceof AccessDeniedException ? "permission denied"
                    : e instanceof java.nio.file.FileAlreadyExistsException ? "it exists already"
                    : e instanceof java.nio.file.NotDirectoryException ? "not a directory"
                    : "the file system refused";
            String reason = f.getReason() == null ? kind : f.getReason();
            return (f.getFile() == null ? "" : f.getFile() + ": ") + reason
                    + (f.getOtherFile() == null ? "" : " (" + f.getOtherFile() + ")");
        }
        return "I/O error: " + (e.getMessage() == null ? e.toString() : e.getMessage());
    }

    /**
     * {@code lease acquire}: for the holder named ({@code --holder PID}), or this command's owner;
     * the directory, then a corrupt record, are said before the holder is looked for.
     */
    static final class Acquire extends Action {
        Acquire() {
            super("acquire", Options.Spec.value("--holder"), Options.Spec.repeatable("--skip"),
                    Options.Spec.value("--ttl"), Options.Spec.flag("--take-unknown"), Options.Spec.value("--wait"),
                    Options.Spec.value("--print"));
        }

        @Override
        String about() {
            return """
                    Takes the lease for the holder and prints the record.
                    exit: 0 granted, 1 held by a live holder, 2 undecided (stderr says why and
                    the way out), 3 no live holder to name
                    """;
        }

        @Override
        boolean creates() {
            return true;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            Optional<Identity> holder = holder(store, c, io);
            if (holder.isEmpty()) {
                return ExitCode.NONE.code();
            }
            Identity asking = holder.get();
            // held by the asking holder itself: granted again at once, no wait to tell of
            Report.Look look = () -> store.read(c.name()).filter(r -> !(r.held() && Records.sameProcess(r.holder(), asking)));
            java.util.concurrent.atomic.AtomicInteger endedBy = new java.util.concurrent.atomic.AtomicInteger();
            // whether the wait is still ending, set false under this lock: no signal acts once the answer stands
            boolean[] stillWaiting = {true};
            if (!c.waitFor().isZero()) {
                Thread waiting = Thread.currentThread();
                for (String signal : List.of("TERM", "INT", "HUP")) {
                    try {
                        // kept until the JVM ends: one restored before it would end the JVM with an answer told
                        sun.misc.Signal.handle(new sun.misc.Signal(signal), got -> {
                            synchronized (stillWaiting) {
                                if (!stillWaiting[0]) {
                                    return; // the answer stands (a grant told or being told, released): the exit follows
                                }
                                if (endedBy.compareAndSet(0, 128 + got.getNumber())) {
                                    waiting.interrupt(); // the first ends the wait as a wait ends, its ticket taken out
                                } else {
                                    System.err.flush(); // a second does not wait for that (a hung etcd): ended now
                                    Runtime.getRuntime().halt(128 + got.getNumber());
                                }
                            }
                        });
                    } catch (IllegalArgumentException | UnsupportedOperationException e) {
                        // a signal the JVM keeps for itself: its own end
                    }
                }
            }
            Acquisition a;
            try {
                a = io.report().waiting(c.name(), c.waitFor(), look, wait -> store.acquire(c.name(), asking, wait),
                        asked -> asked instanceof Acquisition.Granted ? null : asked);
            } catch (IOException e) {
                synchronized (stillWaiting) {
                    stillWaiting[0] = false;
                }
                if (endedBy.get() == 0) {
                    throw e;
                }
                return grantedAsTheSignalCame(store, c, io, asking).orElse(endedBy.get());
            }
            synchronized (stillWaiting) {
                stillWaiting[0] = false;
            }
            Thread.interrupted(); // a signal that came as it was granted: the grant is told all the same
            if (endedBy.get() != 0 && !(a instanceof Acquisition.Granted)) {
                return endedBy.get(); // the wait ended without it: the signal's end, as had it come a moment before
            }
            return io.report().acquisition(a, c.printFence(), true);
        }
    }

    /**
     * A wait a signal ended, maybe as the grant was written (a channel the interrupt closed fails then): the
     * exit code of a grant to {@code asking} that stands, told as it stands; empty when none does.
     */
    private static Optional<Integer> grantedAsTheSignalCame(LeaseStore store, Request c, Io io, Identity asking) {
        Thread.interrupted();
        try {
            Optional<LeaseRecord> now = store.read(c.name());
            if (now.isEmpty() || !now.get().held() || !Records.sameProcess(now.get().holder(), asking)) {
                return Optional.empty();
            }
            Acquisition again = store.acquire(c.name(), asking);
            if (again instanceof Acquisition.Granted g && g.lease().fence() == now.get().fence()) {
                return Optional.of(io.report().acquisition(again, c.printFence(), true));
            }
            if (again instanceof Acquisition.Granted fresh) {
                fresh.lease().release(); // a new grant, after the signal: not this call's to keep
            }
        } catch (IOException | RuntimeException e) {
            // nothing more can be told: the signal's end
        }
        return Optional.empty();
    }

    /**
     * {@code lease claim}: a reservation taken over by the process that carries its token, named
     * with {@code --holder PID} or, without it, the one the token was started in.
     */
    static final class Claim extends Action {
        Claim() {
            super("claim", Options.Spec.value("--holder"), Options.Spec.repeatable("--skip"),
                    Options.Spec.value("--print"));
        }

        @Override
        String about() {
            return """
                    Takes the reservation named by $PROCLIVE_LEASE_TOKEN, for the holder or the
                    process lease run started (it must carry the token).
                    exit: 0 granted, 1 held, 2 undecided, 3 the holder does not carry the token
                    """;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            String token = c.token().orElseThrow();
            Optional<Identity> holder = c.holder().isEmpty() ? carrier(store, c, io, token) : holder(store, c, io);
            if (holder.isEmpty()) {
                return ExitCode.NONE.code();
            }
            return io.report().acquisition(store.claim(c.name(), token, holder.get()), c.printFence(), true);
        }

        /**
         * Without {@code --holder}: the process the token was started in ({@link LeaseStore#carrierOf}):
         * the {@code sh -c} that {@code lease run} started, or this command itself when a shell
         * exec'd it; never the launcher above them.
         */
        private static Optional<Identity> carrier(LeaseStore store, Request c, Io io, String token) throws IOException {
            checkStore(store, c);
            Optional<Identity> carrier = store.carrierOf(token);
            if (carrier.isEmpty()) {
                Say.line(io.err(), "this process does not carry " + LeaseStore.TOKEN_VARIABLE
                        + " in its initial environment, so no holder can be named for the claim: name it with --holder PID");
            }
            return carrier;
        }
    }

    /** A directory that cannot be written to, then a corrupt record: said before any holder is looked for. */
    private static void checkStore(LeaseStore store, Request c) throws IOException {
        if (store.directory().isPresent() && !Files.isWritable(store.directory().get())) {
            throw new AccessDeniedException(store.directory().get().toString(), null, "the directory is not writable");
        }
        store.read(c.name());
    }

    /** The holder {@code --holder} names, or this command's owner; said on stderr when there is none alive. */
    private static Optional<Identity> holder(LeaseStore store, Request c, Io io) throws IOException {
        checkStore(store, c);
        Optional<Identity> holder;
        if (c.holder().isEmpty()) {
            holder = OwnerResolver.builder().skip(c.skip().toArray(new String[0])).build().resolve();
        } else {
            holder = ProcLive.identify(c.holder().get());
        }
        if (holder.isEmpty()) {
            Say.line(io.err(), "no live holder could be named ("
                    + c.holder().map(pid -> "pid " + pid).orElse("the owner") + ")");
        }
        return holder;
    }

    /** {@code lease renew}: the renewed record on stdout; 1 when the fence's grant is lost. */
    static final class Renew extends Action {
        Renew() {
            super("renew", Options.Spec.value("--fence"), Options.Spec.value("--ttl"));
        }

        @Override
        String about() {
            return """
                    Renews the grant at that fence and prints the record; its TTL is kept
                    unless --ttl gives one.
                    exit: 0 renewed, 1 not this fence's any more
                    """;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            try {
                io.out().println(LeaseJson.write(store.renew(c.name(), c.fence().getAsLong())));
                return ExitCode.OK.code();
            } catch (LeaseLostException e) {
                Say.line(io.err(), e.getMessage());
                return ExitCode.NO.code();
            }
        }
    }

    /** {@code lease release}: 0 released, 1 not this fence's to release, with the reason on stderr. */
    static final class Release extends Action {
        Release() {
            super("release", Options.Spec.value("--fence"));
        }

        @Override
        String about() {
            return """
                    Releases the grant at that fence; the record says released.
                    exit: 0 released (or already), 1 not this fence's any more
                    """;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            long fence = c.fence().getAsLong();
            if (store.release(c.name(), fence)) {
                return ExitCode.OK.code();
            }
            Optional<LeaseRecord> now = store.read(c.name());
            if (now.isEmpty()) {
                Say.line(io.err(), "lease " + c.name() + " has no record: nothing released");
            } else if (now.get().fence() != fence) {
                Say.line(io.err(), "lease " + c.name() + " is at fence " + now.get().fence() + ", not " + fence
                        + ": nothing released (a later grant is not this one's to end)");
            } else {
                Say.line(io.err(), "lease " + c.name() + " at fence " + fence
                        + " is not held by the same process any more: nothing released");
            }
            return ExitCode.NO.code();
        }
    }

    /** {@code lease show}: the record with its holder's verdict, or its fence alone. */
    static final class Show extends Action {
        Show() {
            super("show", Options.Spec.value("--print"));
        }

        @Override
        String about() {
            return """
                    Prints the record with its holder's verdict; takes no lock.
                    exit: 0 shown, 3 no record
                    """;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            Optional<LeaseRecord> r = store.read(c.name());
            if (r.isEmpty()) {
                return noRecord(c, io);
            }
            io.out().println(c.printFence() ? Long.toString(r.get().fence())
                    : LeaseJson.write(r.get(), Optional.of(ProcLive.explain(r.get().holder())), Optional.empty()));
            return ExitCode.OK.code();
        }
    }

    /** {@code lease break}: the record as it was, ended whoever holds it. */
    static final class Break extends Action {
        Break() {
            super("break");
        }

        @Override
        String about() {
            return """
                    The operator's override: ends the grant whoever holds it (fence kept; the
                    record says released, with ended.how broken) and prints the record written.
                    A record that cannot be trusted (not JSON, contradictory, rolled back, a link
                    in its place) is removed instead, and what was wrong with it said; fences
                    keep growing.
                    exit: 0 broken or removed, 3 no record
                    """;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            Optional<LeaseCorruptException> corrupt = Optional.empty();
            try {
                store.read(c.name());
            } catch (LeaseCorruptException e) {
                corrupt = Optional.of(e);
            }
            Optional<LeaseRecord> broken = store.breakLease(c.name());
            if (broken.isEmpty() && corrupt.isPresent()) {
                String why = corrupt.get().getMessage();
                int hint = why.indexOf("; break the lease to go on");
                why = hint < 0 ? why : why.substring(0, hint); // not told to the one who just did
                io.out().println(IdentityJson.removed(c.name(), why));
                Say.line(io.err(), "cleared what could not be trusted in lease " + c.name() + ": " + why
                        + "; the next grant's fence is above every fence a record proves");
                return ExitCode.OK.code();
            }
            if (broken.isEmpty()) {
                return noRecord(c, io);
            }
            io.out().println(LeaseJson.write(broken.get()));
            return ExitCode.OK.code();
        }
    }

    /** That the lease has no record, on stderr; exit 3. */
    private static int noRecord(Request c, Io io) {
        Say.line(io.err(), "lease " + c.name() + " has no record");
        return ExitCode.NONE.code();
    }

    /** {@code lease run}: see {@link LeaseRun}. */
    static final class Run extends Action {
        Run() {
            super("run", Options.Spec.value("--ttl"), Options.Spec.value("--wait"), Options.Spec.flag("--take-unknown"),
                    Options.Spec.value("--on-lost"));
        }

        @Override
        String about() {
            return """
                    Runs COMMAND holding the lease: renewed while it runs, ended when it exits,
                    with its status; signals are passed on. A refusal is one line on stderr.
                    Should the lease be lost (etcd: its keep-alive failed for 3/4 of its TTL),
                    it says so on stderr at once and sends the command SIGTERM.
                    exit: the command's status (128+N for a signal), 126/127 if it cannot be
                    run / is not found, 1 held, 2 undecided
                    """;
        }

        @Override
        String trailer() {
            return " -- COMMAND [ARG]...";
        }

        @Override
        boolean supervises() {
            return true;
        }

        @Override
        boolean creates() {
            return true;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            return new LeaseRun(io.report(), io.err(), c.warnOnLost()).run(store, c.name(), c.command(), c.waitFor());
        }
    }

    /**
     * {@code lease keep}: keeps this machine's holders' grants on etcd alive and ends each the moment
     * its holder dies, until TERM or INT; says so once on stderr when a member first answered, and says
     * each failure there, trying again.
     */
    static final class Keep extends Action {
        Keep() {
            super("keep");
        }

        @Override
        String about() {
            return """
                    Keeps this machine's holders' grants in etcd alive and ends each the moment
                    its holder dies, until TERM or INT. Takes no NAME.
                    What fails (a member that does not answer, an answer that cannot be read) is
                    said on stderr and tried again, backing off to about a second.
                    exit: 0 when stopped by TERM or INT
                    """;
        }

        @Override
        boolean named() {
            return false;
        }

        @Override
        int on(LeaseStore store, Request c, Io io) throws IOException {
            Thread keeping = Thread.currentThread();
            for (String signal : List.of("TERM", "INT")) {
                try {
                    // the orderly end: the keeping stops, the store is closed, exit 0 (not the JVM's 128+N)
                    sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> keeping.interrupt());
                } catch (IllegalArgumentException | UnsupportedOperationException e) {
                    // a signal the JVM keeps for itself: its own end, 128+N
                }
            }
            try {
                store.keepHolders(KEEP_POLL, line -> Say.line(io.err(), line));
            } catch (InterruptedException e) {
                Say.line(io.err(), "stopped keeping; the grants it kept live out their TTL");
            }
            return ExitCode.OK.code();
        }
    }
}
