package dev.proclive.cli;

import java.io.ByteArrayInputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The run the build makes the launcher's class-data archive from ({@code -XX:ArchiveClassesAtExit}):
 * the hook commands in the foreground, so the archive holds the classes they load: {@code owner},
 * {@code identify}, {@code check} and {@code wait} on a gone process, {@code ancestry} and {@code ancestor}
 * (one identity, and JSON Lines), bad input, standard input. Output is
 * discarded; the exit status is 0 whatever the verdicts, so a build on any machine gets its archive.
 * Not a command: nothing calls it but the build.
 */
public final class ArchiveTraining {

    private ArchiveTraining() {
    }

    /** Runs the commands; ignores {@code args}. */
    public static void main(String[] args) {
        Console.quietJna();
        PrintStream none = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        String self = Long.toString(ProcessHandle.current().pid());
        byte[] gone = "{\"pid\":999999999,\"start\":\"1\"}".getBytes(StandardCharsets.UTF_8);
        new Main(none, none, new ByteArrayInputStream(new byte[0])).run("owner");
        new Main(none, none, new ByteArrayInputStream(new byte[0])).run("identify", self);
        new Main(none, none, new ByteArrayInputStream(gone)).run("check");
        new Main(none, none, new ByteArrayInputStream(new byte[0])).run("check", "{\"pid\":1,\"start\":\"1\"}");
        new Main(none, none, new ByteArrayInputStream(gone)).run("wait");
        new Main(none, none, new ByteArrayInputStream(new byte[0])).run("ancestry");
        new Main(none, none, new ByteArrayInputStream(new byte[0])).run("ancestor", "{\"pid\":1,\"start\":\"1\"}");
        byte[] lines = "{\"pid\":999999999,\"start\":\"1\"}\n{\"pid\":1,\"start\":\"1\",\"host\":\"x\"}\n"
                .getBytes(StandardCharsets.UTF_8);
        new Main(none, none, new ByteArrayInputStream(lines)).run("ancestor");
        new Main(none, none, new ByteArrayInputStream(new byte[0])).run("check", "{\"pid\":\"x\"}");
        new Main(none, none, System.in).run("check"); // the real standard input: its read loads classes of its own
        System.exit(0);
    }
}
