package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Rules the compiler does not check. */
class ArchitectureTest {

    static final Path MAIN = Path.of("src/main/java/dev/proclive");

    private static List<Path> sources() throws IOException {
        try (Stream<Path> files = Files.walk(MAIN)) {
            return files.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList());
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void jnaStaysInThePlatformPackagesAndTheLinuxKillFallback() throws IOException {
        List<Path> allowed = List.of(MAIN.resolve("linux/Kill.java"));
        List<String> offenders = sources().stream()
                .filter(p -> read(p).contains("com.sun.jna"))
                .filter(p -> !allowed.contains(p))
                .filter(p -> !p.startsWith(MAIN.resolve("macos")) && !p.startsWith(MAIN.resolve("windows")))
                .map(Path::toString)
                .collect(Collectors.toList());
        assertThat(offenders).as("files that mention JNA outside macos/, windows/ and linux/Kill.java").isEmpty();
    }

    @Test
    void jacksonStaysInTheJsonMappingAndTheCli() throws IOException {
        List<String> offenders = sources().stream()
                .filter(p -> read(p).contains("com.fasterxml.jackson"))
                .filter(p -> !p.endsWith("Identity.java") && !p.endsWith("PidDeserializer.java")
                        && !p.endsWith("StrictStringDeserializer.java"))
                .filter(p -> !p.startsWith(MAIN.resolve("cli")))
                .map(Path::toString)
                .collect(Collectors.toList());
        assertThat(offenders).isEmpty();
    }

    @Test
    void everyPackageSaysWhatLivesThere() throws IOException {
        try (Stream<Path> dirs = Files.walk(MAIN)) {
            List<Path> packages = dirs.filter(Files::isDirectory)
                    .filter(d -> {
                        try (Stream<Path> f = Files.list(d)) {
                            return f.anyMatch(p -> p.toString().endsWith(".java"));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    .collect(Collectors.toList());
            assertThat(packages).isNotEmpty().allSatisfy(d -> assertThat(d.resolve("package-info.java")).exists());
        }
    }

    @Test
    void theLibraryNeverAsksDnsForTheHostName() throws IOException {
        assertThat(sources()).noneSatisfy(p -> assertThat(read(p)).contains("getLocalHost"));
    }
}
