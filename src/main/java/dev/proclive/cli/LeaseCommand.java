package dev.proclive.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.OwnerResolver;
import dev.proclive.ProcLive;
import dev.proclive.Verdict;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeasePolicy;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.LeaseStore;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code proclive lease acquire|renew|release|show|break NAME --dir DIR ...}: the lease store for
 * shell hooks. Exit codes: 0 done, 1 held by a live holder (or not this fence's any more), 2
 * undecided, 3 no holder or no record, 64 usage, 65 a bad name or a corrupt record, 74 an I/O
 * failure. When several apply, the first of usage, name, directory, corrupt record, holder wins.
 */
final class LeaseCommand {

    private final ObjectMapper json;
    private final PrintStream out;
    private final PrintStream err;

    LeaseCommand(ObjectMapper json, PrintStream out, PrintStream err) {
        this.json = json;
        this.out = out;
        this.err = err;
    }

    /** Bad usage, said on one line; exit 64. */
    static final class Usage extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Usage(String message) {
            super(message, null, false, false);
        }
    }

    /** The options of one command line, parsed before anything is touched. */
    private static final class Options {
        String action;
        String name;
        Path dir;
        /** Empty for the owner, else the pid given. */
        Optional<Long> holder = Optional.empty();
        final List<String> skip = new ArrayList<>();
        Long fence;
        Duration ttl;
        boolean takeUnknown;
    }

    int run(List<String> args) {
        Options o;
        try {
            o = parse(args);
        } catch (Usage e) {
            Main.say(err, e.getMessage() + " (see proclive --help)");
            return Main.USAGE;
        }
        try {
            LeaseStore.checkName(o.name); // before the directory is touched
        } catch (IllegalArgumentException e) {
            Main.say(err, e.getMessage());
            return Main.BAD_INPUT;
        }
        try {
            LeasePolicy.Builder policy = LeasePolicy.builder().takeUnknownAfterTtl(o.takeUnknown);
            if (o.ttl != null) {
                policy.ttl(o.ttl);
            }
            LeaseStore store = LeaseStore.open(o.dir, policy.build());
            switch (o.action) {
                case "acquire":
                    return acquire(store, o);
                case "renew":
                    return renew(store, o);
                case "release":
                    return store.release(o.name, o.fence) ? 0 : 1;
                case "show":
                    return show(store, o);
                default: // break
                    Optional<LeaseRecord> broken = store.breakLease(o.name);
                    if (broken.isEmpty()) {
                        Main.say(err, "lease " + o.name + " has no record");
                        return Main.NO_IDENTITY;
                    }
                    out.println(broken.get().toJson());
                    return 0;
            }
        } catch (LeaseCorruptException e) {
            Main.say(err, e.getMessage());
            return Main.BAD_INPUT;
        } catch (IOException e) {
            Main.say(err, describe(e));
            return Main.IO_FAILURE;
        } catch (java.io.UncheckedIOException e) {
            Main.say(err, describe(e.getCause()));
            return Main.IO_FAILURE;
        }
    }

    private int acquire(LeaseStore store, Options o) throws IOException {
        // The directory, then a corrupt record, are said before the holder is looked for.
        if (!Files.isWritable(store.directory())) {
            throw new AccessDeniedException(store.directory().toString(), null, "the directory is not writable");
        }
        store.read(o.name);
        Optional<Identity> holder;
        if (o.holder.isEmpty()) {
            OwnerResolver.Builder resolver = OwnerResolver.builder();
            o.skip.forEach(resolver::skip);
            holder = resolver.build().resolve();
        } else {
            holder = ProcLive.identify(o.holder.get());
        }
        if (holder.isEmpty()) {
            Main.say(err, "no live holder could be named ("
                    + o.holder.map(pid -> "pid " + pid).orElse("the owner") + ")");
            return Main.NO_IDENTITY;
        }
        Acquisition a;
        try {
            a = store.acquire(o.name, holder.get());
        } catch (IllegalArgumentException e) {
            Main.say(err, e.getMessage());
            return Main.NO_IDENTITY; // the holder died between naming it and taking the lease
        }
        if (a instanceof Acquisition.Granted granted) {
            out.println(granted.lease().record().toJson());
            return 0;
        }
        if (a instanceof Acquisition.Held held) {
            out.println(withVerdict(held.record(), held.verdict()));
            return 1;
        }
        Acquisition.Undecided undecided = (Acquisition.Undecided) a;
        ObjectNode line = withVerdict(undecided.record(), undecided.verdict());
        undecided.eligibleAt().ifPresent(at -> line.put("eligibleAt", LeaseRecord.timestamp(at)));
        out.println(line);
        return 2;
    }

    private int renew(LeaseStore store, Options o) throws IOException {
        try {
            out.println(store.renew(o.name, o.fence).toJson());
            return 0;
        } catch (LeaseLostException e) {
            Main.say(err, e.getMessage());
            return 1;
        }
    }

    private int show(LeaseStore store, Options o) throws IOException {
        Optional<LeaseRecord> r = store.read(o.name);
        if (r.isEmpty()) {
            Main.say(err, "lease " + o.name + " has no record");
            return Main.NO_IDENTITY;
        }
        out.println(withVerdict(r.get(), ProcLive.explain(r.get().holder())));
        return 0;
    }

    private ObjectNode withVerdict(LeaseRecord record, Verdict verdict) throws IOException {
        ObjectNode line = (ObjectNode) json.readTree(record.toJson());
        ObjectNode v = line.putObject("verdict");
        v.put("liveness", Main.lower(verdict.liveness()));
        v.put("reason", Main.lower(verdict.reason()));
        return line;
    }

    private static String describe(IOException e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        return e.getClass().getSimpleName().replace("Exception", "") + ": " + m;
    }

    private static Options parse(List<String> args) {
        if (args.isEmpty()) {
            throw new Usage("lease needs an action: acquire, renew, release, show or break");
        }
        Options o = new Options();
        o.action = args.get(0);
        if (!List.of("acquire", "renew", "release", "show", "break").contains(o.action)) {
            throw new Usage("unknown lease action: " + o.action);
        }
        for (int i = 1; i < args.size(); i++) {
            String arg = args.get(i);
            if (!arg.startsWith("--")) {
                if (o.name != null) {
                    throw new Usage("lease " + o.action + " takes one NAME, got another: " + arg);
                }
                o.name = arg;
                continue;
            }
            if (arg.equals("--take-unknown")) {
                allowed(o, arg, "acquire");
                o.takeUnknown = true;
                continue;
            }
            String option = arg;
            String value;
            int eq = arg.indexOf('=');
            if (eq > 0) {
                option = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            } else {
                if (i + 1 >= args.size()) {
                    throw new Usage(arg + " needs a value");
                }
                value = args.get(++i);
            }
            switch (option) {
                case "--dir":
                    if (value.isEmpty()) {
                        throw new Usage("--dir needs a directory");
                    }
                    o.dir = Path.of(value);
                    break;
                case "--holder":
                    allowed(o, option, "acquire");
                    if (!value.equals("owner")) {
                        try {
                            o.holder = Optional.of(Main.pid(value));
                        } catch (Main.BadInput e) {
                            throw new Usage("--holder is owner or a PID, not \"" + value + "\"");
                        }
                    }
                    break;
                case "--skip":
                    allowed(o, option, "acquire");
                    if (value.isBlank()) {
                        throw new Usage("--skip needs a non-empty NAME");
                    }
                    o.skip.add(value);
                    break;
                case "--ttl":
                    allowed(o, option, "acquire", "renew");
                    if (!value.matches("[0-9]{1,9}") || Long.parseLong(value) == 0) {
                        throw new Usage("--ttl is a whole number of seconds above 0, not \"" + value + "\"");
                    }
                    o.ttl = Duration.ofSeconds(Long.parseLong(value));
                    break;
                case "--fence":
                    allowed(o, option, "renew", "release");
                    java.util.OptionalLong fence = LeaseRecord.parseFence(value);
                    if (fence.isEmpty()) {
                        throw new Usage("--fence is a whole number from 0 to " + Long.MAX_VALUE + ", not \"" + value + "\"");
                    }
                    o.fence = fence.getAsLong();
                    break;
                default:
                    throw new Usage("lease " + o.action + ": unknown option " + option);
            }
        }
        if (o.name == null) {
            throw new Usage("lease " + o.action + " needs a NAME");
        }
        if (o.dir == null) {
            throw new Usage("lease " + o.action + " needs --dir DIR");
        }
        if ((o.action.equals("renew") || o.action.equals("release")) && o.fence == null) {
            throw new Usage("lease " + o.action + " needs --fence N");
        }
        return o;
    }

    private static void allowed(Options o, String option, String... actions) {
        if (!List.of(actions).contains(o.action)) {
            throw new Usage(option + " is not an option of lease " + o.action);
        }
    }
}
