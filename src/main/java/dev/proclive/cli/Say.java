package dev.proclive.cli;

import dev.proclive.text.OneLine;
import java.io.PrintStream;

/** The one stderr writer of the command line: {@code proclive: MESSAGE}, on one line. */
final class Say {

    private Say() {
    }

    /** One line on {@code err}, {@code proclive: MESSAGE}, control characters escaped ({@link OneLine#escape}). */
    static void line(PrintStream err, String message) {
        err.println("proclive: " + OneLine.escape(message));
    }
}
