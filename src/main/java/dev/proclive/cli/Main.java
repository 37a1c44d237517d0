package dev.proclive.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * {@code proclive COMMAND}: prints identities as one JSON line and verdicts as
 * {@code {"liveness":"alive","reason":"matched"}}. Exit codes: 0 alive (or printed), 1 dead,
 * 2 unknown, 3 no identity, 64 bad usage, 65 bad input (one line on stderr, no stack trace).
 * Each command is a {@link Command}; this class only finds it, and turns what every command may
 * throw into its exit code.
 */
public final class Main {

    private final Command.Io io;

    Main(PrintStream out, PrintStream err, InputStream in) {
        this.io = new Command.Io(out, err, in);
    }

    public static void main(String[] args) {
        int code;
        try {
            Console.quietJna();
            // JSON out is UTF-8 bytes whatever the locale says (a POSIX locale would print "?" for "ë").
            PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                    StandardCharsets.UTF_8);
            PrintStream err = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.err), true,
                    StandardCharsets.UTF_8);
            System.setOut(out);
            System.setErr(err);
            code = new Main(out, err, System.in).run(Console.utf8Arguments(args, "/proc/self/cmdline",
                    Console.argumentCharset()));
            code = written(out, err, code);
        } catch (Throwable e) {
            code = Console.lastResort(System.err, e);
        }
        System.out.flush();
        System.err.flush();
        // halt, not exit: the CLI registers no shutdown hook, and from JDK 21 on System.exit first
        // looks up a System.Logger to log the exit, ~10 ms of a hook command's time
        Runtime.getRuntime().halt(code);
    }

    /**
     * 74 in place of success when standard output could not be written (closed, a full disk): what the
     * command should have printed (an identity, a fence) is lost. Another exit code is an answer of itself
     * (dead, unknown, none) and stays.
     */
    static int written(PrintStream out, PrintStream err, int code) {
        if (code != ExitCode.OK.code() || !out.checkError()) {
            return code;
        }
        Say.line(err, "could not write to standard output: what the command printed is lost (it had succeeded)");
        return ExitCode.IO_FAILURE.code();
    }

    int run(String... args) {
        if (args.length == 0) {
            return usage("no command given");
        }
        String name = args[0];
        List<String> rest = List.of(args).subList(1, args.length);
        if (name.equals("lease") && !rest.isEmpty() && asksForHelp(rest)) {
            Optional<String> action = LeaseCommand.help(rest.get(0));
            if (action.isPresent()) {
                io.out().println(action.get());
                return ExitCode.OK.code();
            }
        }
        if (HelpText.COMMANDS.containsKey(name) && asksForHelp(rest)) {
            io.out().println(HelpText.COMMANDS.get(name));
            return ExitCode.OK.code();
        }
        Command command = command(name);
        if (command == null) {
            return usage("unknown command: " + name);
        }
        try {
            return command.run(rest, io);
        } catch (Options.Usage e) {
            return usage(e.getMessage());
        } catch (BadInput e) {
            Say.line(io.err(), e.getMessage());
            return ExitCode.BAD_INPUT.code();
        }
    }

    /** The command called {@code name}, or null; only that one is made (a hook's path loads no other). */
    private static Command command(String name) {
        switch (name) {
            case "owner":
                return new OwnerCommand();
            case "identify":
                return new VerdictCommands.Identify();
            case "check":
                return new VerdictCommands.Check();
            case "wait":
                return new VerdictCommands.Wait();
            case "ancestry":
                return new AncestryCommands.Chain();
            case "ancestor":
                return new AncestryCommands.Ancestor();
            case "lease":
                return new LeaseCommand(System.getenv());
            case "demo":
                return new Demo();
            case "--help":
            case "-h":
            case "help":
                return (args, io) -> noArguments(name, args, HelpText.ALL, io);
            case "--version":
                return (args, io) -> noArguments(name, args, "proclive " + version(), io);
            default:
                return null;
        }
    }

    /** Prints {@code text} when {@code args} is empty. */
    private static int noArguments(String name, List<String> args, String text, Command.Io io) {
        if (!args.isEmpty()) {
            throw new Options.Usage(name + " takes no arguments");
        }
        io.out().println(text);
        return ExitCode.OK.code();
    }

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

    private int usage(String problem) {
        Say.line(io.err(), problem + " (see proclive --help)");
        return ExitCode.USAGE.code();
    }

    static String version() {
        try (InputStream v = Main.class.getResourceAsStream("version.txt")) {
            return v == null ? "unknown" : new String(v.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
