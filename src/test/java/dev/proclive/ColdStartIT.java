package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * The Linux happy path in a fresh JVM, as a hook runs it: resolve the owner and check it. It never
 * touches JNA, and it loads little ("The hook path in a cold JVM" in the design): a few proclive
 * classes, nothing bootstrapped, no exception.
 */
@EnabledOnOs(OS.LINUX)
class ColdStartIT {

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String testClasses() {
        return Path.of(System.getProperty("proclive.testClasses", "target/test-classes")).toAbsolutePath().toString();
    }

    /** The most proclive classes {@code resolveOwner()} + {@code check} may load in a fresh JVM. */
    static final int CLASS_LIMIT = 15;

    /** What a fresh JVM on {@code classPath} loads running {@code main}: class names, a hidden class's address dropped. */
    private static java.util.Set<String> loaded(Path dir, String classPath, Class<?> main) throws Exception {
        Path log = dir.resolve(main.getSimpleName() + ".classes");
        run(List.of(java(), "-Xlog:class+load=info:file=" + log + ":none", "-cp", classPath, main.getName()));
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (String line : java.nio.file.Files.readAllLines(log)) {
            String name = line.strip().split(" ", 2)[0];
            int hidden = name.indexOf("/0x");
            names.add(hidden < 0 ? name : name.substring(0, hidden));
        }
        assertThat(names).as("the log of " + main.getSimpleName()).contains(main.getName());
        return names;
    }

    @Test
    void theHookPathLoadsFewClassesAndNothingItDoesNotNeed(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        // the library with JNA and Jackson beside it, as an application has them: the CLI jar holds all three
        String classPath = Path.of(System.getProperty("proclive.cliJar")).toAbsolutePath() + File.pathSeparator
                + testClasses();
        java.util.Set<String> empty = loaded(dir, classPath, EmptyMain.class);
        java.util.Set<String> cold = loaded(dir, classPath, ColdStartMain.class);
        java.util.Set<String> added = new java.util.TreeSet<>(cold);
        added.removeAll(empty);

        List<String> proclive = added.stream().filter(c -> c.startsWith("dev.proclive."))
                .filter(c -> !c.equals(ColdStartMain.class.getName())).toList();
        assertThat(proclive).as("proclive classes on the hook path").hasSizeLessThanOrEqualTo(CLASS_LIMIT)
                .noneMatch(c -> c.startsWith("dev.proclive.lease.") || c.startsWith("dev.proclive.cli."))
                .noneMatch(c -> c.contains("Lambda") || c.endsWith("$1"));
        assertThat(added).as("classes the hook path loads that an empty main does not")
                .noneMatch(c -> c.startsWith("com.sun.jna.") || c.startsWith("com.fasterxml.jackson."))
                .noneMatch(c -> c.startsWith("java.lang.invoke.")) // lambdas, method handles, indy concatenation
                .noneMatch(c -> c.startsWith("java.lang.ProcessHandle"))
                .noneMatch(c -> c.endsWith("Exception") || c.endsWith("Error")); // thrown, or linked by a catch

        java.util.Set<String> thrown = thrown(dir, classPath, ColdStartMain.class);
        thrown.removeAll(thrown(dir, classPath, EmptyMain.class));
        assertThat(thrown).as("exceptions thrown on the hook path (-Xlog:exceptions)").isEmpty();
    }

    /** The classes of the exceptions a fresh JVM throws running {@code main}, as -Xlog:exceptions names them. */
    private static java.util.Set<String> thrown(Path dir, String classPath, Class<?> main) throws Exception {
        Path log = dir.resolve(main.getSimpleName() + ".exceptions");
        run(List.of(java(), "-Xlog:exceptions=info:file=" + log + ":none", "-cp", classPath, main.getName()));
        java.util.Set<String> names = new java.util.TreeSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<a '([^']+)'").matcher(java.nio.file.Files.readString(log));
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    @Test
    void runsWithNeitherJnaNorJacksonOnTheClassPath() throws Exception {
        String library = Path.of(System.getProperty("proclive.jar")).toAbsolutePath().toString();
        String out = run(List.of(java(), "-cp", library + File.pathSeparator + testClasses(),
                ColdStartMain.class.getName()));
        assertThat(out.strip()).isEqualTo("ALIVE");
    }

    @Test
    void loadsNoJnaClassWhenJnaIsThere() throws Exception {
        String cli = Path.of(System.getProperty("proclive.cliJar")).toAbsolutePath().toString();
        List<String> command = new ArrayList<>(List.of(java(), "-verbose:class",
                "-cp", cli + File.pathSeparator + testClasses(), ColdStartMain.class.getName()));
        String out = run(command);
        assertThat(out).contains("dev.proclive.linux.LinuxProcessIntrospector").contains("ALIVE");
        assertThat(out.lines().filter(l -> l.contains("com.sun.jna"))).isEmpty();
    }
}
