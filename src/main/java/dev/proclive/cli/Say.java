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

    /** {@code pid N (NAME)}: a process as a person knows it. */
    static String process(dev.proclive.Identity id) {
        return "pid " + id.pid() + (id.name() == null || id.name().isEmpty() ? "" : " (" + id.name() + ")");
    }

    /** A duration in seconds as a person wrote it: {@code 30 s}, {@code 0.3 s}. */
    static String seconds(java.time.Duration d) {
        return java.math.BigDecimal.valueOf(d.toMillis(), 3).stripTrailingZeros().toPlainString() + " s";
    }
}
