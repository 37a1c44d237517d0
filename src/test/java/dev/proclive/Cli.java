package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs {@code target/proclive-cli.jar} in a child JVM, as a user would. */
public final class Cli {

    /** What a run printed and how it ended. */
    public record Result(int exit, String out, String err) {
        /** stdout without the line break. */
        public String line() {
            return out.strip();
        }

        @Override
        public String toString() {
            return "exit " + exit + ", stdout [" + out.strip() + "], stderr [" + err.strip() + "]";
        }
    }

    private Cli() {
    }

    public static Path jar() {
        String jar = System.getProperty("proclive.cliJar", "target/proclive-cli.jar");
        Path p = Path.of(jar).toAbsolutePath();
        assertThat(p).as("the CLI jar, built by mvn package").exists();
        return p;
    }

    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * {@code java -jar proclive-cli.jar ARGS} with the launcher's JVM flags (its JIT tier, and the
     * class-data archive the build made beside the jar, which the JVM maps only for the jar it was
     * made from), as a list to put after a wrapper command.
     */
    public static List<String> command(Path jar, String... args) {
        List<String> command = new ArrayList<>(List.of(java(), "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Xshare:auto",
                "-Xlog:disable", "-Xlog:all=off"));
        Path archive = jar.resolveSibling("proclive-cli.jsa");
        if (Files.isRegularFile(archive)) {
            command.add("-XX:SharedArchiveFile=" + archive);
        }
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(Arrays.asList(args));
        return command;
    }

    public static Result run(String... args) {
        return exec(command(jar(), args), "");
    }

    public static Result runWithStdin(String stdin, String... args) {
        return exec(command(jar(), args), stdin);
    }

    public static Result exec(List<String> command, String stdin) {
        return exec(command, stdin.getBytes(StandardCharsets.UTF_8), java.util.Map.of());
    }

    /** Runs {@code command} with these bytes on stdin and these variables added to its environment. */
    public static Result exec(List<String> command, byte[] stdin, java.util.Map<String, String> env) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.environment().putAll(env);
            Process p = builder.start();
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> readAll(p, false));
            CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p, true));
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin);
            } catch (IOException ignored) {
                // the command did not read its input
            }
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + command);
            }
            return new Result(p.exitValue(), new String(out.join(), StandardCharsets.UTF_8),
                    new String(err.join(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static byte[] readAll(Process p, boolean err) {
        try {
            return (err ? p.getErrorStream() : p.getInputStream()).readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code words} as one command line for {@code sh -c}, each single-quoted. */
    public static String shellQuoted(List<String> words) {
        StringBuilder line = new StringBuilder();
        for (String w : words) {
            line.append(line.length() == 0 ? "" : " ").append('\'').append(w.replace("'", "'\\''")).append('\'');
        }
        return line.toString();
    }

    /** A copy of the CLI jar in a directory any user may read, for runs as another user. */
    public static Path worldReadableCopy(Path dir) throws IOException {
        Path copy = dir.resolve("proclive-cli.jar");
        Files.copy(jar(), copy);
        for (Path p : List.of(dir, copy)) {
            p.toFile().setReadable(true, false);
            p.toFile().setExecutable(true, false);
        }
        return copy;
    }
}
