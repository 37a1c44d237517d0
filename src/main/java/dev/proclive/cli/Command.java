package dev.proclive.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.List;

/**
 * One command of {@code proclive}, as {@link Main} dispatches it: what it does with its arguments,
 * and the exit code. Every command says a usage problem by throwing {@link Options.Usage} (64) and
 * bad input by {@link BadInput} (65), parses its options with {@link Options} from its own table,
 * and has its {@code --help} in {@link HelpText#COMMANDS}.
 */
interface Command {

    /** Runs the command on {@code args} (what follows its name); its exit code. */
    int run(List<String> args, Io io);

    /** Where a command writes and reads. */
    record Io(PrintStream out, PrintStream err, InputStream in) {
    }
}
