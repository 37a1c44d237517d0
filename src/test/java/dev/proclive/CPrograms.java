package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds the small C programs of {@code src/test/resources/c} that live tests need; gcc is installed by {@code .ci/run}. */
public final class CPrograms {

    private CPrograms() {
    }

    /** Compiles {@code name.c} into {@code dir/name}, or skips the calling test when gcc is missing. */
    public static Path compile(Path dir, String name) throws Exception {
        return gcc(dir, name, dir.resolve(name), "-pthread");
    }

    /** Compiles {@code name.c} into the shared library {@code dir/name.so}, for {@code LD_PRELOAD}; skips as {@link #compile}. */
    public static Path compileShared(Path dir, String name) throws Exception {
        return gcc(dir, name, dir.resolve(name + ".so"), "-shared", "-fPIC");
    }

    private static Path gcc(Path dir, String name, Path binary, String... options) throws Exception {
        Path source = dir.resolve(name + ".c");
        try (InputStream in = CPrograms.class.getResourceAsStream("/c/" + name + ".c")) {
            Files.copy(in, source);
        }
        java.util.List<String> command = new java.util.ArrayList<>(java.util.List.of("gcc"));
        command.addAll(java.util.List.of(options));
        command.addAll(java.util.List.of("-o", binary.toString(), source.toString(), "-ldl"));
        Process gcc;
        try {
            gcc = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            assumeTrue(false, "gcc is needed to build " + name + ".c: " + e.getMessage());
            throw e;
        }
        String output = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(gcc.waitFor()).as("gcc: %s", output).isZero();
        binary.toFile().setReadable(true, false);
        binary.toFile().setExecutable(true, false);
        return binary;
    }
}
