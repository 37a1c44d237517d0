package dev.proclive;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;

/**
 * The test kit's busy machine: processes that end all the time, as a build beside the tests makes
 * them, and the one way a test says that such processes, not its own, kept an untracked token scan
 * from proving anything.
 */
public final class BusyMachine {

    private BusyMachine() {
    }

    /**
     * A loop of short-lived processes ({@code /bin/true}, forked for ever) that ends by itself when
     * this JVM is gone, so that a test run cut short leaves no churn behind it.
     */
    public static Process churnLoop() throws IOException {
        return new ProcessBuilder("sh", "-c", "while kill -0 $PPID 2>/dev/null; do /bin/true; done").start();
    }

    /**
     * Skips the rest of a test, saying why, when {@code said} (what the library answered) is a token
     * scan that processes kept ending under in every pass: on a busy machine that is the library's
     * honest answer (it proves nothing), and a test cannot quiet processes it does not own.
     */
    public static void assumeScanNotOutrun(String said) {
        assumeTrue(!(said.contains(" in each of ") && said.contains(" passes") && said.contains("ended")),
                "processes this test does not own kept ending under every pass of the token scan (a busy machine): "
                        + said.strip());
    }

    /** {@link #assumeScanNotOutrun(String)} for a command that answered undecided (exit 2). */
    public static void assumeScanNotOutrun(Cli.Result answered) {
        if (answered.exit() == 2) {
            assumeScanNotOutrun(answered.err());
        }
    }
}
