package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** What the built jars promise in their manifests and contents. */
class JarIT {

    private static JarFile open(String property) throws Exception {
        return new JarFile(Path.of(System.getProperty(property)).toFile());
    }

    @Test
    void theLibraryJarIsAModuleThatExportsOnlyTheApiAndTheSpi() throws Exception {
        try (JarFile jar = open("proclive.jar")) {
            assertThat(jar.stream().map(e -> e.getName()).filter(n -> n.endsWith(".class")))
                    .isNotEmpty()
                    .allMatch(n -> n.startsWith("dev/proclive/") || n.equals("module-info.class"));
        }
        ModuleDescriptor module = ModuleFinder.of(Path.of(System.getProperty("proclive.jar"))).findAll()
                .iterator().next().descriptor();
        assertThat(module.name()).isEqualTo("dev.proclive");
        assertThat(module.isAutomatic()).isFalse();
        assertThat(module.exports()).extracting(ModuleDescriptor.Exports::source)
                .containsExactlyInAnyOrder("dev.proclive", "dev.proclive.spi", "dev.proclive.lease");
        assertThat(module.exports()).allMatch(e -> !e.isQualified());
        assertThat(module.packages()).contains("dev.proclive.linux", "dev.proclive.macos", "dev.proclive.cli");
    }

    /** The jars of this test run's class path whose artifact names match {@code names} (a regex alternation). */
    private static List<String> dependencyJars(String names) {
        List<String> jars = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.matches(".*/(" + names + ")-[0-9.]+\\.jar")) {
                jars.add(entry);
            }
        }
        return jars;
    }

    @Test
    void theModuleRunsOnTheModulePath() throws Exception {
        List<String> path = new ArrayList<>(List.of(System.getProperty("proclive.jar")));
        path.addAll(dependencyJars("jna|jna-platform|jackson-databind|jackson-core|jackson-annotations"));
        assertThat(path).hasSize(6);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--module-path", String.join(File.pathSeparator, path),
                "-m", "dev.proclive/dev.proclive.cli.Main", "check", "{\"pid\":1,\"start\":\"x\",\"host\":\"elsewhere.invalid\"}")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).isIn("{\"liveness\":\"unknown\",\"reason\":\"other_host\"}",
                "{\"liveness\":\"unknown\",\"reason\":\"unsupported_platform\"}");
        assertThat(p.exitValue()).isEqualTo(2);
    }

    @Test
    void onTheModulePathJnaIsOptionalForLinuxChecks() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("os.name").startsWith("Linux"),
                "Linux reads /proc without JNA; other platforms need it");
        List<String> path = new ArrayList<>(List.of(System.getProperty("proclive.jar")));
        path.addAll(dependencyJars("jackson-databind|jackson-core|jackson-annotations"));
        assertThat(path).hasSize(4);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--module-path", String.join(File.pathSeparator, path),
                "-m", "dev.proclive/dev.proclive.cli.Main", "identify", Long.toString(ProcessHandle.current().pid()))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).contains("\"pid\":" + ProcessHandle.current().pid());
        assertThat(p.exitValue()).as(out).isZero();
    }

    @Test
    void withoutJnaALeaseIsAnIoFailureNeverAnErrorNorAnUnlockedGrant(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("os.name").startsWith("Linux"),
                "Linux checks run without JNA; the lease's lock needs it");
        List<String> path = new ArrayList<>(List.of(System.getProperty("proclive.jar"),
                Path.of("target", "test-classes").toString()));
        path.addAll(dependencyJars("jackson-databind|jackson-core|jackson-annotations"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", String.join(File.pathSeparator, path),
                "dev.proclive.LeaseWithoutJnaMain", dir.resolve("leases").toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).startsWith("IOException").contains("JNA");
    }

    @Test
    void onTheModulePathALeaseWithoutJnaResolvedNamesTheModuleToAdd(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("os.name").startsWith("Linux"),
                "the lease's lock needs JNA on Linux and macOS; Windows locks without it");
        List<String> path = new ArrayList<>(List.of(System.getProperty("proclive.jar")));
        path.addAll(dependencyJars("jna|jna-platform|jackson-databind|jackson-core|jackson-annotations"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String holder = Long.toString(ProcessHandle.current().pid());
        for (boolean added : new boolean[] {false, true}) {
            List<String> command = new ArrayList<>(List.of(java, "--module-path", String.join(File.pathSeparator, path)));
            if (added) {
                command.addAll(List.of("--add-modules", "com.sun.jna"));
            }
            command.addAll(List.of("-m", "dev.proclive/dev.proclive.cli.Main", "lease", "acquire", "build",
                    "--dir", dir.resolve("leases").toString(), "--holder", holder));
            Process p = new ProcessBuilder(command).start();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            if (added) {
                assertThat(p.exitValue()).as(err).isZero();
            } else {
                // JNA is on the module path but, required static, not resolved: the message says what to add
                assertThat(p.exitValue()).isEqualTo(74);
                assertThat(err).contains("requires com.sun.jna;").contains("--add-modules com.sun.jna");
            }
        }
    }

    @Test
    void theJavadocShowsTheApiAndTheSpiOnly() throws Exception {
        Path javadoc = Path.of(System.getProperty("proclive.jar").replace(".jar", "-javadoc.jar"));
        try (JarFile jar = new JarFile(javadoc.toFile())) {
            List<String> pages = jar.stream().map(e -> e.getName()).filter(n -> n.endsWith(".html")).toList();
            assertThat(pages).anyMatch(n -> n.endsWith("dev/proclive/ProcLive.html"))
                    .anyMatch(n -> n.endsWith("dev/proclive/spi/ProcessIntrospector.html"))
                    .noneMatch(n -> n.contains("/linux/") || n.contains("/macos/") || n.contains("/cli/")
                            || n.contains("/platform/") || n.contains("/posix/") || n.contains("/windows/")
                            || n.contains("/text/") || n.contains("/lease/core/") || n.contains("/lease/book/")
                            || n.contains("/lease/files/") || n.contains("/lease/etcd/"));
            // the sources' encoding holds for javadoc too, whatever the locale it was built under
            List<String> garbled = new java.util.ArrayList<>();
            for (String page : pages) {
                String text = new String(jar.getInputStream(jar.getEntry(page)).readAllBytes(),
                        java.nio.charset.StandardCharsets.UTF_8);
                if (text.indexOf('\uFFFD') >= 0) {
                    garbled.add(page);
                }
            }
            assertThat(garbled).as("pages with U+FFFD in them").isEmpty();
            String procLive = new String(jar.getInputStream(jar.stream().filter(e -> e.getName().endsWith("proclive/ProcLive.html"))
                    .findFirst().orElseThrow()).readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(procLive).as("an em dash of the sources, as it is").contains("\u2014");
        }
    }

    @Test
    void theCliJarRunsOnItsOwn() throws Exception {
        try (JarFile jar = open("proclive.cliJar")) {
            Attributes main = jar.getManifest().getMainAttributes();
            assertThat(main.getValue("Main-Class")).isEqualTo("dev.proclive.cli.Main");
            assertThat(main.getValue("Enable-Native-Access")).isEqualTo("ALL-UNNAMED");
            assertThat(jar.getEntry("com/sun/jna/Native.class")).isNotNull();
            assertThat(jar.getEntry("com/sun/jna/platform/mac/SystemB.class")).isNotNull();
            assertThat(jar.getEntry("com/fasterxml/jackson/databind/ObjectMapper.class")).isNotNull();
            assertThat(jar.getEntry("module-info.class")).isNull();
        }
    }
}
