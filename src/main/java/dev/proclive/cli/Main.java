package dev.proclive.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.proclive.Ancestry;
import dev.proclive.Identity;
import dev.proclive.OwnerResolver;
import dev.proclive.ProcLive;
import dev.proclive.Verdict;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code proclive COMMAND}: prints identities as one JSON line and verdicts as
 * {@code {"liveness":"alive","reason":"matched"}}. Exit codes: 0 alive (or printed), 1 dead,
 * 2 unknown, 3 no identity, 64 bad usage, 65 bad input (one line on stderr, no stack trace).
 */
public final class Main {




    /** Whether {@code --help} (or {@code -h}) stands among the options, before any {@code --}. */
    private static boolean asksForHelp(List<String> args) {
        for (String a : args) {
            if (a.equals("--")) {
                return false;
            }
            if (a.equals("--help") || a.equals("-h")) {
                return true;
            }
        }
        return false;
    }

    private final PrintStream out;
    private final PrintStream err;
    private final InputStream in;

    Main(PrintStream out, PrintStream err, InputStream in) {
        this.out = out;
        this.err = err;
        this.in = in;
    }

    public static void main(String[] args) {
        int code;
        try {
            quietJna();
            // JSON out is UTF-8 bytes whatever the locale says (a POSIX locale would print "?" for "ë").
            PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                    StandardCharsets.UTF_8);
            PrintStream err = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.err), true,
                    StandardCharsets.UTF_8);
            System.setOut(out);
            System.setErr(err);
            code = new Main(out, err, System.in).run(utf8Arguments(args, "/proc/self/cmdline", argumentCharset()));
        } catch (Throwable e) {
            code = lastResort(System.err, e);
        }
        System.out.flush();
        System.err.flush();
        // halt, not exit: the CLI registers no shutdown hook, and from JDK 21 on System.exit first
        // looks up a System.Logger to log the exit, ~10 ms of a hook command's time
        Runtime.getRuntime().halt(code);
    }

    /**
     * This process's JNA loads only the C library, by the name the dynamic loader knows: without a
     * platform path it does not run {@code ldconfig -p} to list the loader's paths.
     */
    static void quietJna() {
        if (System.getProperty("jna.platform.library.path") == null) {
            System.setProperty("jna.platform.library.path", "");
        }
    }

    /**
     * The arguments as the UTF-8 they came as, whatever the locale: under a POSIX locale the JVM
     * decodes {@code é}'s bytes to U+FFFD, so where an argument holds one, it is read again from
     * {@code cmdline} (Linux: the process's own arguments, NUL-separated, main's last), each
     * checked to decode with {@code locale} to the argument the JVM gave. Unchanged
     * when nothing was lost, when {@code cmdline} cannot be read or does not line up with
     * {@code args}, or when the bytes are not UTF-8 either.
     */
    static String[] utf8Arguments(String[] args, String cmdline, java.nio.charset.Charset locale) {
        boolean lost = false;
        for (String a : args) {
            lost |= a.indexOf('\uFFFD') >= 0;
        }
        if (!lost) {
            return args;
        }
        byte[] bytes;
        try {
            bytes = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(cmdline));
        } catch (IOException | RuntimeException e) {
            return args;
        }
        List<byte[]> parts = new java.util.ArrayList<>();
        for (int from = 0, i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                parts.add(java.util.Arrays.copyOfRange(bytes, from, i));
                from = i + 1;
            }
        }
        if (parts.size() < args.length) {
            return args;
        }
        String[] utf8 = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            byte[] raw = parts.get(parts.size() - args.length + i);
            if (!new String(raw, locale).equals(args[i])) {
                return args; // not these arguments: leave them as the JVM gave them
            }
            try {
                utf8[i] = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(raw)).toString();
            } catch (java.nio.charset.CharacterCodingException notUtf8) {
                return args;
            }
        }
        return utf8;
    }

    /** The charset the JVM decoded its arguments with: the locale's ({@code sun.jnu.encoding}). */
    private static java.nio.charset.Charset argumentCharset() {
        String jnu = System.getProperty("sun.jnu.encoding");
        try {
            return jnu != null && java.nio.charset.Charset.isSupported(jnu) ? java.nio.charset.Charset.forName(jnu)
                    : java.nio.charset.Charset.defaultCharset();
        } catch (IllegalArgumentException e) {
            return java.nio.charset.Charset.defaultCharset();
        }
    }

    /**
     * What nothing else caught: one line on stderr and exit 70 (74 for an I/O failure), never a
     * stack trace and never an exit code that means a verdict.
     */
    static int lastResort(PrintStream err, Throwable e) {
        if (e instanceof java.io.UncheckedIOException io) {
            Say.line(err, "I/O failure: " + io.getCause());
            return ExitCode.IO_FAILURE.code();
        }
        Say.line(err, "internal error, please report it: " + e);
        return ExitCode.INTERNAL.code();
    }

    int run(String... args) {
        if (args.length == 0) {
            return usage("no command given");
        }
        String command = args[0];
        List<String> rest = List.of(args).subList(1, args.length);
        if (command.equals("lease") && !rest.isEmpty() && asksForHelp(rest)) {
            Optional<String> action = LeaseCommand.help(rest.get(0));
            if (action.isPresent()) {
                out.println(action.get());
                return ExitCode.OK.code();
            }
        }
        if (HelpText.COMMANDS.containsKey(command) && asksForHelp(rest)) {
            out.println(HelpText.COMMANDS.get(command));
            return ExitCode.OK.code();
        }
        try {
            switch (command) {
                case "owner":
                    return owner(rest);
                case "identify":
                    return identify(rest);
                case "lease":
                    return new LeaseCommand(out, err, System.getenv()).run(rest);
                case "check":
                    return check(rest);
                case "ancestry":
                    return ancestry(rest);
                case "ancestor":
                    return ancestor(rest);
                case "wait":
                    return waitFor(rest);
                case "demo":
                    if (!rest.isEmpty()) {
                        return usage("demo takes no arguments");
                    }
                    return new Demo(out).run();
                case "--help":
                case "-h":
                case "help":
                    if (!rest.isEmpty()) {
                        return usage(command + " takes no arguments");
                    }
                    out.println(HelpText.ALL);
                    return ExitCode.OK.code();
                case "--version":
                    if (!rest.isEmpty()) {
                        return usage("--version takes no arguments");
                    }
                    out.println("proclive " + version());
                    return ExitCode.OK.code();
                default:
                    return usage("unknown command: " + command);
            }
        } catch (Options.Usage e) {
            return usage(e.getMessage());
        } catch (BadInput e) {
            Say.line(err, e.getMessage());
            return ExitCode.BAD_INPUT.code();
        }
    }

    private int owner(List<String> args) {
        Options o = Options.parse("owner", args,
                List.of(Options.Spec.repeatable("--skip"), Options.Spec.value("--of"), Options.Spec.flag("--trace")), false);
        if (!o.words().isEmpty()) {
            throw new Options.Usage("owner: unexpected argument: " + o.words().get(0));
        }
        OwnerResolver.Builder builder = OwnerResolver.builder();
        for (String skip : o.values("--skip")) {
            if (skip.isBlank()) {
                throw new Options.Usage("--skip needs a non-empty NAME");
            }
            builder.skip(skip);
        }
        Long of = o.has("--of") ? Arguments.pid(o.value("--of").get()) : null; // no lambda on a hook's path
        boolean trace = o.has("--trace");
        OwnerResolver resolver = builder.build();
        if (!trace) {
            Optional<Identity> owner = of == null ? resolver.resolve() : resolver.resolveFor(of);
            if (owner.isEmpty()) {
                Say.line(err, "no owner could be determined (proclive owner --trace shows each step of the walk)");
                return ExitCode.NONE.code();
            }
            return print(owner);
        }
        OwnerResolver.Trace walk = of == null ? resolver.trace() : resolver.traceFor(of);
        for (OwnerResolver.Step step : walk.steps()) {
            err.println(traceLine(step));
        }
        return print(walk.owner());
    }

    /** One step of {@code owner --trace}: {@code proclive: skipped  4241 hook.sh (exe dash, argv0 sh): why}. */
    static String traceLine(OwnerResolver.Step step) {
        return "proclive: " + step;
    }

    /** {@code ancestry [--of PID]}: {@code {"complete":true,"chain":[…identities…]}}, nearest first. */
    private int ancestry(List<String> args) {
        Options o = Options.parse("ancestry", args, List.of(Options.Spec.value("--of")), false);
        if (!o.words().isEmpty()) {
            throw new Options.Usage("ancestry: unexpected argument: " + o.words().get(0));
        }
        Ancestry a = o.has("--of") ? ProcLive.ancestry(Arguments.pid(o.value("--of").get())) : ProcLive.ancestry();
        out.println(IdentityJson.ancestry(a));
        return ExitCode.OK.code();
    }

    /**
     * {@code ancestor [JSON]}: whether an identity (argument or stdin) is an ancestor of this
     * command. Identities on stdin, one a line (JSON Lines; one line is one identity): each answered,
     * in order, from one snapshot, one line each. Exit 0 when one of them is an ancestor, 1 when
     * each provably is not, 2 otherwise: the same for one line or many. A bad line is 65, naming it,
     * with nothing printed. {@code --nearest}: lines {@code {"key":…,"owner":{…}}}, answered with the
     * key of the nearest ancestor among them ({@link #nearest}).
     */
    private int ancestor(List<String> args) {
        if (args.equals(List.of("--nearest"))) {
            return nearest();
        }
        if (args.size() > 1) {
            return usage("ancestor takes at most one JSON argument, or --nearest");
        }
        List<Identity> ids = new java.util.ArrayList<>();
        if (!args.isEmpty()) {
            ids.add(parse(argumentBytes(notAnOption("ancestor", args.get(0)))));
        } else {
            byte[] input = readStdin();
            List<byte[]> lines = lines(input);
            if (lines.isEmpty()) {
                ids.add(parse(input)); // says what is wrong with an empty input
            }
            for (int i = 0; i < lines.size(); i++) {
                try {
                    ids.add(parse(lines.get(i)));
                } catch (BadInput e) {
                    throw new BadInput(lines.size() == 1 ? e.getMessage() : "line " + (i + 1) + ": " + e.getMessage());
                }
            }
        }
        Ancestry a = ProcLive.ancestry(); // one walk for every line
        StringBuilder answers = new StringBuilder();
        boolean any = false;
        boolean allNot = true;
        for (Identity id : ids) {
            Ancestry.Match m = a.match(id);
            any |= m.relation() == Ancestry.Relation.ANCESTOR;
            allNot &= m.relation() == Ancestry.Relation.NOT_ANCESTOR;
            answers.append(IdentityJson.match(m)).append('\n');
        }
        out.print(answers);
        out.flush();
        return any ? ExitCode.OK.code() : allNot ? ExitCode.NO.code() : ExitCode.UNKNOWN.code();
    }

    /** The lines of {@code input} that are not blank. */
    private static List<byte[]> lines(byte[] input) {
        List<byte[]> lines = new java.util.ArrayList<>();
        int from = 0;
        for (int i = 0; i <= input.length; i++) {
            if (i == input.length || input[i] == '\n') {
                byte[] line = java.util.Arrays.copyOfRange(input, from, i);
                if (!new String(line, StandardCharsets.ISO_8859_1).isBlank()) {
                    lines.add(line);
                }
                from = i + 1;
            }
        }
        return lines;
    }

    /**
     * {@code ancestor --nearest}: which session's owner is this command's nearest ancestor, from
     * JSON Lines {@code {"key":"…","owner":{IDENTITY}}}: {@code {"nearest":"KEY","depth":N}}, exit 0;
     * {@code {"nearest":null,"relation":"none"}}, exit 1; {@code "ambiguous"} (with its keys and
     * depth) or {@code "unknown"} (with why), exit 2.
     */
    private int nearest() {
        List<byte[]> lines = lines(readStdin());
        java.util.Map<String, Identity> owners = new java.util.LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            java.util.Map.Entry<String, Identity> e;
            try {
                e = IdentityJson.keyed(lines.get(i));
            } catch (JsonProcessingException bad) {
                throw new BadInput("line " + (i + 1) + ": bad JSON: " + oneLine(bad));
            } catch (IOException bad) {
                throw new BadInput("line " + (i + 1) + ": cannot be read: " + bad.getMessage());
            }
            if (owners.putIfAbsent(e.getKey(), e.getValue()) != null) {
                throw new BadInput("line " + (i + 1) + ": key " + dev.proclive.text.OneLine.quote(e.getKey()) + " is given twice");
            }
        }
        Ancestry.Nearest<String> n = ProcLive.ancestry().nearest(owners);
        out.println(IdentityJson.nearest(n));
        return n instanceof Ancestry.Nearest.Found ? ExitCode.OK.code()
                : n instanceof Ancestry.Nearest.None ? ExitCode.NO.code() : ExitCode.UNKNOWN.code();
    }

    private int identify(List<String> args) {
        if (args.size() != 1) {
            return usage("identify takes exactly one PID");
        }
        return print(ProcLive.identify(Arguments.pid(args.get(0))));
    }

    private int check(List<String> args) {
        if (args.size() > 1) {
            return usage("check takes at most one JSON argument");
        }
        Identity identity = parse(args.isEmpty() ? readStdin() : argumentBytes(notAnOption("check", args.get(0))));
        Verdict verdict = ProcLive.explain(identity);
        out.println(IdentityJson.verdict(verdict));
        return ExitCode.of(verdict.liveness());
    }

    /**
     * {@code wait [JSON] [--timeout SECONDS]}: waits for the end of the identity given (as for
     * {@code check}) and prints its verdict once final. Exit 0 DEAD, 1 still ALIVE at the timeout,
     * 2 UNKNOWN (at once, when it cannot be proven alive to begin with).
     */
    private int waitFor(List<String> args) {
        Options o = Options.parse("wait", args, List.of(Options.Spec.value("--timeout")), false);
        if (o.words().size() > 1) {
            throw new Options.Usage("wait takes at most one JSON argument");
        }
        String json = o.words().isEmpty() ? null : o.words().get(0);
        Long timeoutMillis = null;
        if (o.has("--timeout")) {
            timeoutMillis = Arguments.seconds("--timeout", o.value("--timeout").get(), true, 0).toMillis();
        }
        Identity identity = parse(json == null ? readStdin() : argumentBytes(json));
        java.util.concurrent.CompletableFuture<Verdict> end = ProcLive.onExit(identity);
        Verdict verdict;
        try {
            verdict = timeoutMillis == null ? end.get()
                    : end.get(timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            end.cancel(false);
            verdict = ProcLive.explain(identity);
        } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
            verdict = ProcLive.explain(identity);
        }
        out.println(IdentityJson.verdict(verdict));
        switch (verdict.liveness()) { // the end came: 0; still alive at the timeout: 1
            case DEAD:
                return ExitCode.OK.code();
            case ALIVE:
                return ExitCode.NO.code();
            default:
                return ExitCode.UNKNOWN.code();
        }
    }

    /**
     * An identity from JSON bytes, read by {@link IdentityJson} (no {@code ObjectMapper} is built on
     * a hook's path). Bytes, not a decoded {@code String}: Jackson refuses bytes that are not UTF-8,
     * where a decoded string would carry replacement characters into a verdict.
     */
    static Identity parse(byte[] bytes) {
        if (new String(bytes, StandardCharsets.ISO_8859_1).isBlank()) {
            throw new BadInput("no identity given: expected JSON such as {\"pid\":123,\"start\":\"4567\"}");
        }
        try {
            Optional<Identity> identity = IdentityJson.read(bytes);
            if (identity.isEmpty()) {
                throw new BadInput("the identity is JSON null");
            }
            return identity.get();
        } catch (JsonProcessingException e) {
            throw new BadInput("bad identity JSON: " + oneLine(e));
        } catch (IOException e) {
            throw new BadInput("cannot read the identity: " + e.getMessage());
        }
    }

    /** {@code argument}, unless it is an option this command does not have ({@code --bogus}): that is usage, not bad JSON. */
    static String notAnOption(String command, String argument) {
        if (argument.startsWith("--") || argument.startsWith("-") && argument.length() > 1
                && !Character.isDigit(argument.charAt(1))) {
            throw new Options.Usage(command + ": unknown option " + argument);
        }
        return argument;
    }

    /**
     * An argument as the UTF-8 bytes it came as. The JVM decodes arguments with the locale's
     * charset and puts U+FFFD where bytes did not decode: that is input we cannot read back.
     */
    static byte[] argumentBytes(String argument) {
        if (argument.indexOf('\uFFFD') >= 0) {
            throw new BadInput("the identity argument is not UTF-8 text"
                    + " (give it on standard input, which is read as UTF-8 bytes)");
        }
        return argument.getBytes(StandardCharsets.UTF_8);
    }

    private int print(Optional<Identity> identity) {
        if (identity.isEmpty()) {
            Say.line(err, "no identity could be determined");
            return ExitCode.NONE.code();
        }
        out.println(IdentityJson.write(identity.get()));
        return ExitCode.OK.code();
    }

    /** Standard input is read up to this many bytes; more is bad input, not an allocation failure. */
    static final int MAX_INPUT_BYTES = 1 << 20;

    private byte[] readStdin() {
        try {
            byte[] bytes = in.readNBytes(MAX_INPUT_BYTES + 1);
            if (bytes.length > MAX_INPUT_BYTES) {
                throw new BadInput("standard input holds more than " + MAX_INPUT_BYTES
                        + " bytes; an identity is a few hundred");
            }
            return bytes;
        } catch (IOException e) {
            throw new BadInput("cannot read standard input: " + e.getMessage());
        }
    }

    private int usage(String problem) {
        Say.line(err, problem + " (see proclive --help)");
        return ExitCode.USAGE.code();
    }

    static String lower(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    /** Jackson's message without its source excerpt, on one line. */
    private static String oneLine(JsonProcessingException e) {
        String message = e.getOriginalMessage().replaceAll("\\s+", " ").trim();
        if (e.getLocation() != null && e.getLocation().getLineNr() > 0) {
            message += " (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")";
        }
        return message;
    }

    static String version() {
        try (InputStream v = Main.class.getResourceAsStream("version.txt")) {
            return v == null ? "unknown" : new String(v.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
