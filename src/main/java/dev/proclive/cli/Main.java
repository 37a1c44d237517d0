package dev.proclive.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import dev.proclive.Liveness;
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

    static final int ALIVE = 0;
    static final int DEAD = 1;
    static final int UNKNOWN = 2;
    static final int NO_IDENTITY = 3;
    static final int USAGE = 64;
    static final int BAD_INPUT = 65;

    static final String USAGE_TEXT = String.join("\n",
            "usage: proclive COMMAND",
            "",
            "  owner [--skip NAME]...  print the identity of this command's owner: its first",
            "                          ancestor that is not a shell, env or a NAME (exit 3: none)",
            "  identify PID            print the identity of process PID (exit 3: none)",
            "  check [JSON]            check an identity given as argument or on stdin; prints",
            "                          {\"liveness\":…,\"reason\":…} (exit 0 alive, 1 dead, 2 unknown)",
            "  demo                    show what proclive tells, with real processes",
            "  --help                  this text",
            "  --version               the version",
            "",
            "Bad input exits 65, bad usage 64.");

    private final ObjectMapper json = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private final PrintStream out;
    private final PrintStream err;
    private final InputStream in;

    Main(PrintStream out, PrintStream err, InputStream in) {
        this.out = out;
        this.err = err;
        this.in = in;
    }

    public static void main(String[] args) {
        int code = new Main(System.out, System.err, System.in).run(args);
        System.out.flush();
        System.exit(code);
    }

    int run(String... args) {
        if (args.length == 0) {
            return usage("no command given");
        }
        String command = args[0];
        List<String> rest = List.of(args).subList(1, args.length);
        try {
            switch (command) {
                case "owner":
                    return owner(rest);
                case "identify":
                    return identify(rest);
                case "check":
                    return check(rest);
                case "demo":
                    if (!rest.isEmpty()) {
                        return usage("demo takes no arguments");
                    }
                    return new Demo(out, json).run();
                case "--help":
                case "-h":
                case "help":
                    out.println(USAGE_TEXT);
                    return 0;
                case "--version":
                    out.println("proclive " + version());
                    return 0;
                default:
                    return usage("unknown command: " + command);
            }
        } catch (BadInput e) {
            err.println("proclive: " + e.getMessage());
            return BAD_INPUT;
        }
    }

    private int owner(List<String> args) {
        OwnerResolver.Builder builder = OwnerResolver.builder();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            String name;
            if (arg.equals("--skip")) {
                if (i + 1 >= args.size()) {
                    return usage("--skip needs a NAME");
                }
                name = args.get(++i);
            } else if (arg.startsWith("--skip=")) {
                name = arg.substring("--skip=".length());
            } else {
                return usage("owner: unexpected argument: " + arg);
            }
            if (name.isBlank()) {
                return usage("--skip needs a non-empty NAME");
            }
            builder.skip(name);
        }
        return print(builder.build().resolve());
    }

    private int identify(List<String> args) {
        if (args.size() != 1) {
            return usage("identify takes exactly one PID");
        }
        long pid;
        try {
            pid = Long.parseLong(args.get(0));
        } catch (NumberFormatException e) {
            throw new BadInput("PID must be a 64-bit whole number, not \"" + args.get(0) + "\"");
        }
        return print(ProcLive.identify(pid));
    }

    private int check(List<String> args) {
        if (args.size() > 1) {
            return usage("check takes at most one JSON argument");
        }
        String text = args.isEmpty() ? readStdin() : args.get(0);
        Identity identity = parse(text);
        Verdict verdict = ProcLive.explain(identity);
        out.println("{\"liveness\":\"" + lower(verdict.liveness()) + "\",\"reason\":\""
                + lower(verdict.reason()) + "\"}");
        return exitCode(verdict.liveness());
    }

    static int exitCode(Liveness liveness) {
        switch (liveness) {
            case ALIVE:
                return ALIVE;
            case DEAD:
                return DEAD;
            default:
                return UNKNOWN;
        }
    }

    Identity parse(String text) {
        if (text.isBlank()) {
            throw new BadInput("no identity given: expected JSON such as {\"pid\":123,\"start\":\"4567\"}");
        }
        try {
            Identity identity = json.readValue(text, Identity.class);
            if (identity == null) {
                throw new BadInput("the identity is JSON null");
            }
            return identity;
        } catch (JsonProcessingException e) {
            throw new BadInput("bad identity JSON: " + oneLine(e));
        }
    }

    private int print(Optional<Identity> identity) {
        if (identity.isEmpty()) {
            err.println("proclive: no identity could be determined");
            return NO_IDENTITY;
        }
        try {
            out.println(json.writeValueAsString(identity.get()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("an Identity always serializes", e);
        }
        return 0;
    }

    private String readStdin() {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new BadInput("cannot read standard input: " + e.getMessage());
        }
    }

    private int usage(String problem) {
        err.println("proclive: " + problem + " (see proclive --help)");
        return USAGE;
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

    /** Input the user must fix; becomes one stderr line and exit 65. */
    static final class BadInput extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadInput(String message) {
            super(message, null, false, false);
        }
    }
}
