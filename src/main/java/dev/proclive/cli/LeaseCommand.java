package dev.proclive.cli;

import dev.proclive.Identity;
import dev.proclive.OwnerResolver;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.LeaseStore;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code proclive lease ACTION NAME --dir DIR ...}: the lease store for shell hooks. Exit codes: 0
 * done, 1 held by a live holder (or not this fence's any more), 2 undecided, 3 no holder or no
 * record, 64 usage, 65 a bad name or a corrupt record, 74 an I/O failure; {@code run} exits with
 * its command's status (126/127 when it cannot be run / is not found). When several apply, the
 * first of usage, name, directory, corrupt record, holder wins.
 */
final class LeaseCommand {

    private static final List<String> ACTIONS = List.of("acquire", "renew", "release", "show", "break", "claim", "run",
            "keep");

    /** Which options each action takes, besides where the store is ({@link #where}). */
    private static final Map<String, List<Options.Spec>> SPECS = Map.of(
            "acquire", where(Options.Spec.value("--holder"), Options.Spec.repeatable("--skip"),
                    Options.Spec.value("--ttl"), Options.Spec.flag("--take-unknown"), Options.Spec.value("--wait"),
                    Options.Spec.value("--print")),
            "renew", where(Options.Spec.value("--fence"), Options.Spec.value("--ttl")),
            "release", where(Options.Spec.value("--fence")),
            "show", where(Options.Spec.value("--print")),
            "break", where(),
            "claim", where(Options.Spec.value("--holder"), Options.Spec.repeatable("--skip"), Options.Spec.value("--print")),
            "run", where(Options.Spec.value("--ttl"), Options.Spec.value("--wait"), Options.Spec.flag("--take-unknown")),
            "keep", where());

    /** Every action's store: {@code --dir DIR}, or {@code --etcd URL[,URL]...} with {@code --prefix P} and {@code --etcd-ca FILE}. */
    private static List<Options.Spec> where(Options.Spec... more) {
        List<Options.Spec> specs = new java.util.ArrayList<>(List.of(Options.Spec.value("--dir"), Options.Spec.value("--etcd"),
                Options.Spec.value("--prefix"), Options.Spec.value("--etcd-ca")));
        specs.addAll(List.of(more));
        return List.copyOf(specs);
    }

    /** How often {@code lease keep} looks for grants made since. */
    private static final Duration KEEP_POLL = Duration.ofMillis(500);

    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> env;
    private final Report report;

    LeaseCommand(PrintStream out, PrintStream err, Map<String, String> env) {
        this.out = out;
        this.err = err;
        this.env = env;
        this.report = new Report(out, err);
    }

    /** A command line, parsed before anything is touched. */
    private record Command(String action, String name, Store store, Optional<Long> holder, List<String> skip,
                           OptionalLong fence, Optional<Duration> ttl, boolean takeUnknown, Duration waitFor,
                           boolean printFence, Optional<String> token, List<String> command) {
    }

    /** Where the leases are: a directory, or etcd. */
    private record Store(Optional<Path> dir, List<URI> etcd, String prefix, Optional<Path> ca) {
        /** The store, for {@code action}; a directory that does not exist is created only by those that grant. */
        LeaseStore open(String action, LeasePolicy policy) throws IOException {
            if (dir.isEmpty()) {
                return LeaseStore.etcd(etcd, prefix, policy, ca);
            }
            boolean creates = action.equals("acquire") || action.equals("run");
            if (!creates && !Files.isDirectory(dir.get())) {
                throw new NoSuchFileException(dir.get().toString(), null, "no such lease directory");
            }
            return LeaseStore.open(dir.get(), policy);
        }
    }

    int run(List<String> args) {
        Command c;
        try {
            c = parse(args);
        } catch (Options.Usage e) {
            Say.line(err, e.getMessage() + " (see proclive lease --help)");
            return ExitCode.USAGE.code();
        }
        try {
            if (!c.action().equals("keep")) {
                LeaseStore.checkName(c.name()); // before the store is touched
            }
        } catch (IllegalArgumentException e) {
            Say.line(err, e.getMessage());
            return ExitCode.BAD_INPUT.code();
        }
        try {
            LeasePolicy.Builder policy = LeasePolicy.builder().takeUnknownAfterTtl(c.takeUnknown());
            c.ttl().ifPresent(policy::ttl);
            LeaseStore store;
            try {
                store = c.store().open(c.action(), policy.build());
            } catch (IllegalArgumentException e) {
                Say.line(err, e.getMessage() + " (see proclive lease --help)");
                return ExitCode.USAGE.code();
            }
            switch (c.action()) {
                case "acquire":
                case "claim":
                    return acquire(store, c);
                case "renew":
                    return renew(store, c);
                case "release":
                    return release(store, c);
                case "show":
                    return show(store, c);
                case "run":
                    return new LeaseRun(report, err).run(store, c.name(), c.command(), c.waitFor());
                case "keep":
                    return keep(store);
                default: // break
                    Optional<LeaseRecord> broken = store.breakLease(c.name());
                    if (broken.isEmpty()) {
                        Say.line(err, "lease " + c.name() + " has no record");
                        return ExitCode.NONE.code();
                    }
                    out.println(broken.get().toJson());
                    return ExitCode.OK.code();
            }
        } catch (LeaseCorruptException e) {
            Say.line(err, e.getMessage());
            return ExitCode.BAD_INPUT.code();
        } catch (IllegalArgumentException e) {
            // a name this store refuses before it reads or writes anything (on etcd: one ending in .fence)
            Say.line(err, e.getMessage());
            return ExitCode.BAD_INPUT.code();
        } catch (IOException e) {
            Say.line(err, describe(e));
            return ExitCode.IO_FAILURE.code();
        } catch (java.io.UncheckedIOException e) {
            Say.line(err, describe(e.getCause()));
            return ExitCode.IO_FAILURE.code();
        }
    }

    private int acquire(LeaseStore store, Command c) throws IOException {
        // The directory, then a corrupt record, are said before the holder is looked for.
        if (c.store().dir().isPresent() && !Files.isWritable(store.directory())) {
            throw new AccessDeniedException(store.directory().toString(), null, "the directory is not writable");
        }
        store.read(c.name());
        if (c.action().equals("claim") && c.holder().isEmpty()) {
            return claimForTheCarrier(store, c);
        }
        Optional<Identity> holder;
        if (c.holder().isEmpty()) {
            OwnerResolver.Builder resolver = OwnerResolver.builder();
            c.skip().forEach(resolver::skip);
            holder = resolver.build().resolve();
        } else {
            holder = ProcLive.identify(c.holder().get());
        }
        if (holder.isEmpty()) {
            Say.line(err, "no live holder could be named ("
                    + c.holder().map(pid -> "pid " + pid).orElse("the owner") + ")");
            return ExitCode.NONE.code();
        }
        Acquisition a = c.action().equals("claim") ? store.claim(c.name(), c.token().orElseThrow(), holder.get())
                : store.acquire(c.name(), holder.get(), c.waitFor());
        return report.acquisition(a, c.printFence(), true);
    }

    /**
     * {@code lease claim} without {@code --holder}: for the process the token was started in
     * ({@link LeaseStore#carrierOf}): the {@code sh -c} that {@code lease run} started, or this
     * command itself when a shell exec'd it; never the launcher above them.
     */
    private int claimForTheCarrier(LeaseStore store, Command c) throws IOException {
        Optional<Identity> carrier = store.carrierOf(c.token().orElseThrow());
        if (carrier.isEmpty()) {
            Say.line(err, "this process does not carry " + LeaseStore.TOKEN_VARIABLE + " in its initial environment,"
                    + " so no holder can be named for the claim: name it with --holder PID");
            return ExitCode.NONE.code();
        }
        return report.acquisition(store.claim(c.name(), c.token().orElseThrow(), carrier.get()), c.printFence(), true);
    }

    /**
     * {@code lease keep}: keeps this machine's holders' grants on etcd alive and ends each the moment
     * its holder dies, until TERM or INT; says so once on stderr when it starts.
     */
    private int keep(LeaseStore store) throws IOException {
        Say.line(err, "keeping the grants of this machine's holders alive; ending each the moment its holder dies");
        try {
            store.keepHolders(KEEP_POLL);
            return ExitCode.OK.code();
        } catch (InterruptedException e) {
            return ExitCode.OK.code();
        }
    }

    private int renew(LeaseStore store, Command c) throws IOException {
        try {
            out.println(store.renew(c.name(), c.fence().getAsLong()).toJson());
            return ExitCode.OK.code();
        } catch (LeaseLostException e) {
            Say.line(err, e.getMessage());
            return ExitCode.NO.code();
        }
    }

    private int show(LeaseStore store, Command c) throws IOException {
        Optional<LeaseRecord> r = store.read(c.name());
        if (r.isEmpty()) {
            Say.line(err, "lease " + c.name() + " has no record");
            return ExitCode.NONE.code();
        }
        out.println(c.printFence() ? Long.toString(r.get().fence())
                : r.get().toJson(ProcLive.explain(r.get().holder()), Optional.empty()));
        return ExitCode.OK.code();
    }

    /** {@code lease release}: 0 released, 1 not this fence's to release, with the reason on stderr. */
    private int release(LeaseStore store, Command c) throws IOException {
        long fence = c.fence().getAsLong();
        if (store.release(c.name(), fence)) {
            return ExitCode.OK.code();
        }
        Optional<LeaseRecord> now = store.read(c.name());
        if (now.isEmpty()) {
            Say.line(err, "lease " + c.name() + " has no record: nothing released");
        } else if (now.get().fence() != fence) {
            Say.line(err, "lease " + c.name() + " is at fence " + now.get().fence() + ", not " + fence
                    + ": nothing released (a later grant is not this one's to end)");
        } else {
            Say.line(err, "lease " + c.name() + " at fence " + fence + " is not held by the same process any more:"
                    + " nothing released");
        }
        return ExitCode.NO.code();
    }

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

    private Command parse(List<String> args) {
        if (args.isEmpty()) {
            throw new Options.Usage("lease needs an action: " + String.join(", ", ACTIONS));
        }
        String action = args.get(0);
        if (!ACTIONS.contains(action)) {
            throw new Options.Usage("unknown lease action: " + action);
        }
        Options o = Options.parse("lease " + action, args.subList(1, args.size()), SPECS.get(action), action.equals("run"));
        if (action.equals("keep")) {
            if (!o.words().isEmpty()) {
                throw new Options.Usage("lease keep takes no NAME (it keeps every grant under the prefix), got "
                        + o.words().get(0));
            }
        } else if (o.words().size() > 1) {
            throw new Options.Usage("lease " + action + " takes one NAME, got another: " + o.words().get(1));
        } else if (o.words().isEmpty()) {
            throw new Options.Usage("lease " + action + " needs a NAME");
        }
        Store where = store(action, o);
        Optional<Long> holder = Optional.empty();
        if (o.has("--holder") && !o.value("--holder").get().equals("owner")) {
            try {
                holder = Optional.of(Arguments.pid(o.value("--holder").get()));
            } catch (BadInput e) {
                throw new Options.Usage("--holder is owner or a PID, not \"" + o.value("--holder").get() + "\"");
            }
        }
        for (String skip : o.values("--skip")) {
            if (skip.isBlank()) {
                throw new Options.Usage("--skip needs a non-empty NAME");
            }
        }
        OptionalLong fence = OptionalLong.empty();
        if (o.has("--fence")) {
            fence = LeaseRecord.parseFence(o.value("--fence").get());
            if (fence.isEmpty()) {
                throw new Options.Usage("--fence is a whole number from 0 to " + Long.MAX_VALUE + ", not \""
                        + o.value("--fence").get() + "\"");
            }
        } else if (action.equals("renew") || action.equals("release")) {
            throw new Options.Usage("lease " + action + " needs --fence N");
        }
        Optional<Duration> ttl = o.value("--ttl").map(v -> Arguments.seconds("--ttl", v, false, 1));
        Duration wait = o.value("--wait").map(v -> Arguments.seconds("--wait", v, false, 0)).orElse(Duration.ZERO);
        boolean printFence = false;
        if (o.has("--print")) {
            if (!o.value("--print").get().equals("fence")) {
                throw new Options.Usage("--print takes fence, not \"" + o.value("--print").get() + "\"");
            }
            printFence = true;
        }
        Optional<String> token = Optional.empty();
        if (action.equals("claim")) {
            String t = env.get(LeaseStore.TOKEN_VARIABLE);
            if (t == null || t.isEmpty()) {
                throw new Options.Usage("lease claim takes its token from " + LeaseStore.TOKEN_VARIABLE + ", which is not set");
            }
            if (!LeaseRecord.isToken(t)) {
                throw new Options.Usage(LeaseStore.TOKEN_VARIABLE + " is not 32 lowercase hex digits");
            }
            token = Optional.of(t);
        }
        if (action.equals("run") && o.rest().isEmpty()) {
            throw new Options.Usage("lease run needs a command after --");
        }
        return new Command(action, action.equals("keep") ? "" : o.words().get(0), where, holder, o.values("--skip"), fence, ttl, o.has("--take-unknown"),
                wait, printFence, token, o.rest());
    }

    /** {@code --dir DIR}, or {@code --etcd URL[,URL]...} (with {@code --prefix}, {@code --etcd-ca}): one of them. */
    private static Store store(String action, Options o) {
        if (o.has("--dir") && o.has("--etcd")) {
            throw new Options.Usage("lease " + action + " takes --dir or --etcd, not both");
        }
        if (!o.has("--etcd")) {
            if (o.has("--prefix") || o.has("--etcd-ca")) {
                throw new Options.Usage((o.has("--prefix") ? "--prefix" : "--etcd-ca") + " goes with --etcd");
            }
            if (action.equals("keep")) {
                throw new Options.Usage("lease keep needs --etcd URL[,URL]... (a directory's records have no TTL to keep)");
            }
            String dirText = o.value("--dir").orElseThrow(() -> new Options.Usage("lease " + action
                    + " needs --dir DIR or --etcd URL[,URL]..."));
            if (dirText.isEmpty()) {
                throw new Options.Usage("--dir needs a directory");
            }
            try {
                return new Store(Optional.of(Path.of(dirText)), List.of(), "", Optional.empty());
            } catch (InvalidPathException e) {
                throw new Options.Usage("--dir cannot be a path here: " + e.getReason());
            }
        }
        List<URI> endpoints = new java.util.ArrayList<>();
        for (String url : o.value("--etcd").get().split(",", -1)) {
            try {
                endpoints.add(new URI(url.strip()));
            } catch (java.net.URISyntaxException e) {
                throw new Options.Usage("--etcd takes URL[,URL]... such as http://127.0.0.1:2379, not \"" + url + "\"");
            }
        }
        String prefix = o.value("--prefix").orElse(LeaseStore.DEFAULT_PREFIX);
        if (prefix.isEmpty()) {
            throw new Options.Usage("--prefix needs a key prefix, such as " + LeaseStore.DEFAULT_PREFIX);
        }
        Optional<Path> ca = Optional.empty();
        if (o.has("--etcd-ca")) {
            try {
                ca = Optional.of(Path.of(o.value("--etcd-ca").get()));
            } catch (InvalidPathException e) {
                throw new Options.Usage("--etcd-ca cannot be a path here: " + e.getReason());
            }
        }
        return new Store(Optional.empty(), List.copyOf(endpoints), prefix, ca);
    }
}
