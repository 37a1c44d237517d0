package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code target/proclive}, the launcher: the same output and exit status as {@code java -jar},
 * through a symbolic link, with its class-data archive made, refused, or impossible to make — and
 * never a word of its own.
 */
@DisabledOnOs(OS.WINDOWS)
class LauncherIT {

    @TempDir
    Path tmp;

    static Path launcher() {
        return Cli.jar().resolveSibling("proclive");
    }

    private static Cli.Result run(Path cache, String... args) {
        List<String> command = new java.util.ArrayList<>(List.of(launcher().toString()));
        command.addAll(List.of(args));
        return Cli.exec(command, new byte[0], Map.of("XDG_CACHE_HOME", cache.toString(), "PROCLIVE_JAVA", Cli.java()));
    }

    private static List<Path> archives(Path cache) throws Exception {
        Path dir = cache.resolve("proclive");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".jsa")).toList();
        }
    }

    @Test
    void itIsBuiltExecutableBesideTheJar() {
        assertThat(launcher()).isRegularFile();
        assertThat(Files.isExecutable(launcher())).isTrue();
    }

    @Test
    void itSaysWhatJavaJarSaysAndMakesItsArchiveUnheard() throws Exception {
        Path cache = tmp.resolve("cache");
        String other = "{\"pid\":1,\"start\":\"1\",\"host\":\"another-host\"}";
        Cli.Result plain = Cli.run("check", other);
        Cli.Result first = run(cache, "check", other);
        assertThat(first.out()).isEqualTo(plain.out()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_host\"}\n");
        assertThat(first.exit()).isEqualTo(plain.exit()).isEqualTo(2);
        assertThat(first.err()).isEmpty();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (archives(cache).isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(archives(cache)).as("made in the background after the first run").hasSize(1);

        Cli.Result warm = run(cache, "check", other);
        assertThat(warm.out()).isEqualTo(plain.out());
        assertThat(warm.exit()).isEqualTo(2);
        assertThat(warm.err()).isEmpty();
        Cli.Result usage = run(cache, "frobnicate");
        assertThat(usage.exit()).isEqualTo(64);
        assertThat(usage.err()).isEqualTo(Cli.run("frobnicate").err());

        Path archive = archives(cache).get(0);
        Files.delete(archive); // the JVM makes it read-only
        Files.writeString(archive, "not an archive");
        Cli.Result refused = run(cache, "--version");
        assertThat(refused.out()).isEqualTo(Cli.run("--version").out());
        assertThat(refused.err()).as("a refused archive is not heard").isEmpty();
        assertThat(refused.exit()).isZero();
    }

    @Test
    void withoutACacheOrThroughALinkItRunsAllTheSame() throws Exception {
        Cli.Result noCache = run(Path.of("/proc/1/no-cache-here"), "--version");
        assertThat(noCache.out()).startsWith("proclive ");
        assertThat(noCache.err()).isEmpty();
        assertThat(noCache.exit()).isZero();

        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Files.createSymbolicLink(bin.resolve("proclive"), launcher());
        Cli.Result linked = Cli.exec(List.of(bin.resolve("proclive").toString(), "--version"), new byte[0],
                Map.of("XDG_CACHE_HOME", tmp.resolve("c2").toString(), "PROCLIVE_JAVA", Cli.java()));
        assertThat(linked.out()).isEqualTo(noCache.out());
        assertThat(linked.exit()).isZero();
        Files.delete(bin.resolve("proclive")); // not left for JUnit to follow
    }
}
