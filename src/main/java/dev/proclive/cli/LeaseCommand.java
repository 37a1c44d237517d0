package dev.proclive.cli;

import dev.proclive.lease.book.Records;
import dev.proclive.cli.LeaseActions.Request;
import dev.proclive.cli.LeaseActions.Store;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.LeaseStore;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.InvalidPathException;
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
final class LeaseCommand implements Command {

    /** The actions by name, in the order usage lists them. */
    private static final Map<String, LeaseActions.Action> ACTIONS = actions();

    private static Map<String, LeaseActions.Action> actions() {
        Map<String, LeaseActions.Action> byName = new java.util.LinkedHashMap<>();
        LeaseActions.ALL.forEach(a -> byName.put(a.name(), a));
        return java.util.Collections.unmodifiableMap(byName);
    }

    private final Map<String, String> env;

    /** The lease command, finding a store from {@code env} where its action may ({@code claim}). */
    LeaseCommand(Map<String, String> env) {
        this.env = env;
    }

    /** The {@code --help} of lease action {@code action}, made from its own option table; empty for no such action. */
    static Optional<String> help(String action) {
        return Optional.ofNullable(ACTIONS.get(action)).map(LeaseActions.Action::help);
    }

    /** Parses {@code args} before anything is touched, then hands them to their action, once; its exit code. */
    @Override
    public int run(List<String> args, Io io) {
        Request c;
        try {
            c = parse(args);
        } catch (Options.Usage e) {
            Say.line(io.err(), e.getMessage() + " (see proclive lease " + (!args.isEmpty() && ACTIONS.containsKey(args.get(0))
                    ? args.get(0) + " " : "") + "--help)");
            return ExitCode.USAGE.code();
        }
        return c.action().perform(c, new LeaseActions.Io(io.out(), io.err()));
    }

    /** {@code --on-lost term} (the default: a writer without its lease steps down) or {@code warn}. */
    private static boolean onLost(Options o) {
        Optional<String> v = o.value("--on-lost");
        if (v.isPresent() && !v.get().equals("term") && !v.get().equals("warn")) {
            throw new Options.Usage("--on-lost takes term or warn, not \"" + v.get() + "\"");
        }
        return v.map("warn"::equals).orElse(false);
    }

    private Request parse(List<String> args) {
        if (args.isEmpty()) {
            throw new Options.Usage("lease needs an action: " + String.join(", ", ACTIONS.keySet()));
        }
        String action = args.get(0);
        LeaseActions.Action chosen = ACTIONS.get(action);
        if (chosen == null) {
            throw new Options.Usage("unknown lease action: " + action);
        }
        Options o = Options.parse("lease " + action, args.subList(1, args.size()), chosen.options(), action.equals("run"));
        if (action.equals("keep")) {
            if (!o.words().isEmpty()) {
                throw new Options.Usage("lease keep takes no NAME (it keeps every grant under the prefix), got "
                        + o.words().get(0));
            }
        } else if (o.words().size() > 1 && action.equals("run")) {
            // the command's words before a missing --: say where it goes
            throw new Options.Usage("lease run takes one NAME, got another: " + o.words().get(1) + "; did you mean: lease run "
                    + o.words().get(0) + " -- " + String.join(" ", o.words().subList(1, o.words().size())) + "?");
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
            fence = Records.parseFence(o.value("--fence").get());
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
            if (!Records.isToken(t)) {
                throw new Options.Usage(LeaseStore.TOKEN_VARIABLE + " is not 32 lowercase hex digits");
            }
            token = Optional.of(t);
        }
        if (action.equals("run") && o.rest().isEmpty()) {
            throw new Options.Usage("lease run needs a command after --");
        }
        return new Request(chosen, action.equals("keep") ? "" : o.words().get(0), where, holder, o.values("--skip"), fence, ttl, o.has("--take-unknown"),
                wait, printFence, token, o.rest(), onLost(o));
    }

    /**
     * {@code url} as a message may show it: whatever stands between {@code ://} and the last
     * {@code @} (a user and a password), left out, also from a URL that does not parse.
     */
    static String withoutUser(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (at < 0) {
            return url;
        }
        return scheme >= 0 && scheme + 3 <= at ? url.substring(0, scheme + 3) + "…@" + url.substring(at + 1)
                : "…@" + url.substring(at + 1);
    }

    /** The password from {@code --etcd-password-file FILE} (its first line), else from the variable, if either is given. */
    private Optional<String> password(Options o) {
        if (o.has("--etcd-password-file")) {
            String file = o.value("--etcd-password-file").get();
            try {
                String text = java.nio.file.Files.readString(Path.of(file), java.nio.charset.StandardCharsets.UTF_8);
                String first = text.lines().findFirst().orElse("");
                if (first.isEmpty()) {
                    throw new Options.Usage("--etcd-password-file " + file + " holds no password on its first line");
                }
                return Optional.of(first);
            } catch (java.io.IOException | InvalidPathException e) {
                throw new Options.Usage("--etcd-password-file " + file + " cannot be read: " + e.getClass().getSimpleName());
            }
        }
        return Optional.ofNullable(env.get(LeaseHelp.PASSWORD_VARIABLE)).filter(p -> !p.isEmpty());
    }

    /** {@code --dir DIR}, or {@code --etcd URL[,URL]...} (with {@code --prefix}, {@code --etcd-ca}): one of them. */
    private Store store(String action, Options o) {
        if (o.has("--dir") && o.has("--etcd")) {
            throw new Options.Usage("lease " + action + " takes --dir or --etcd, not both");
        }
        Optional<String> dirOption = o.value("--dir");
        Optional<String> etcdOption = o.value("--etcd");
        Optional<String> prefixOption = o.value("--prefix");
        if (dirOption.isEmpty() && etcdOption.isEmpty() && action.equals("claim")) {
            // A command that lease run started finds its store where lease run put it, whichever it is.
            Optional<String> dir = Optional.ofNullable(env.get(LeaseStore.DIR_VARIABLE)).filter(v -> !v.isEmpty());
            Optional<String> etcd = Optional.ofNullable(env.get(LeaseStore.ETCD_VARIABLE)).filter(v -> !v.isEmpty());
            dirOption = dir;
            if (dir.isEmpty() && etcd.isPresent()) {
                etcdOption = etcd;
                prefixOption = prefixOption.or(() -> Optional.ofNullable(env.get(LeaseStore.PREFIX_VARIABLE))
                        .filter(v -> !v.isEmpty()));
            }
        }
        if (etcdOption.isEmpty()) {
            if (o.has("--prefix") || o.has("--etcd-ca") || o.has("--etcd-password-file")) {
                throw new Options.Usage((o.has("--prefix") ? "--prefix" : o.has("--etcd-ca") ? "--etcd-ca"
                        : "--etcd-password-file") + " goes with --etcd");
            }
            if (action.equals("keep")) {
                throw new Options.Usage("lease keep needs --etcd URL[,URL]... (its grants expire unless kept; a directory's are kept by the JVM that holds them)");
            }
            String dirText = dirOption.orElseThrow(() -> new Options.Usage("lease " + action
                    + " needs --dir DIR or --etcd URL[,URL]..." + (action.equals("claim")
                    ? " (or the " + LeaseStore.DIR_VARIABLE + " or " + LeaseStore.ETCD_VARIABLE + " lease run gives its command)"
                    : "")));
            if (dirText.isEmpty()) {
                throw new Options.Usage("--dir needs a directory");
            }
            try {
                return new Store(Optional.of(Path.of(dirText)), List.of(), "", Optional.empty(), Optional.empty(), Optional.empty());
            } catch (InvalidPathException e) {
                throw new Options.Usage("--dir cannot be a path here: " + e.getReason());
            }
        }
        Optional<String> password = password(o);
        List<URI> endpoints = new java.util.ArrayList<>();
        Optional<String> user = Optional.empty();
        Optional<String> urlPassword = Optional.empty();
        for (String url : etcdOption.get().split(",", -1)) {
            URI e;
            try {
                e = new URI(url.strip());
            } catch (java.net.URISyntaxException bad) {
                throw new Options.Usage("--etcd takes URL[,URL]... such as http://127.0.0.1:2379, not \""
                        + withoutUser(url) + "\"");
            }
            if (e.getPort() > 65535 || e.getPort() == 0) {
                throw new Options.Usage("--etcd: port " + e.getPort() + " is out of range (1 to 65535) in \""
                        + withoutUser(url) + "\"");
            }
            if (password.isPresent() && (e.getRawUserInfo() == null || e.getRawUserInfo().contains(":"))) {
                throw new Options.Usage("a password from " + LeaseHelp.PASSWORD_VARIABLE + " or --etcd-password-file goes with"
                        + " a user and no password in the URL: https://USER@HOST:PORT");
            }
            if (e.getRawUserInfo() != null) {
                String[] parts = e.getRawUserInfo().split(":", 2);
                Optional<String> u = Optional.of(java.net.URLDecoder.decode(parts[0], java.nio.charset.StandardCharsets.UTF_8));
                if (parts[0].isEmpty() || user.isPresent() && !user.equals(u)) {
                    throw new Options.Usage("every --etcd URL names the same user, or none does: \"" + withoutUser(url) + "\"");
                }
                user = u;
                if (parts.length == 2) {
                    urlPassword = Optional.of(java.net.URLDecoder.decode(parts[1], java.nio.charset.StandardCharsets.UTF_8));
                }
                try {
                    e = new URI(e.getScheme(), null, e.getHost(), e.getPort(), e.getPath(), e.getQuery(), e.getFragment());
                } catch (java.net.URISyntaxException bad) {
                    throw new Options.Usage("--etcd takes URL[,URL]..., not \"" + withoutUser(url) + "\"");
                }
            } else if (user.isPresent()) {
                throw new Options.Usage("every --etcd URL names the same user, or none does: \"" + withoutUser(url) + "\"");
            }
            endpoints.add(e);
        }
        String prefix = prefixOption.orElse(LeaseStore.DEFAULT_PREFIX);
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
        Optional<String> fromUrl = urlPassword;
        return new Store(Optional.empty(), List.copyOf(endpoints), prefix, ca, user, password.or(() -> fromUrl));
    }
}
