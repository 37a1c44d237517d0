package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** What the built jars promise in their manifests and contents. */
class JarIT {

    private static JarFile open(String property) throws Exception {
        return new JarFile(Path.of(System.getProperty(property)).toFile());
    }

    @Test
    void theLibraryJarNamesItsModuleAndHoldsOnlyProclive() throws Exception {
        try (JarFile jar = open("proclive.jar")) {
            Attributes main = jar.getManifest().getMainAttributes();
            assertThat(main.getValue("Automatic-Module-Name")).isEqualTo("dev.proclive");
            assertThat(jar.stream().map(e -> e.getName()).filter(n -> n.endsWith(".class")))
                    .isNotEmpty()
                    .allMatch(n -> n.startsWith("dev/proclive/"));
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
