package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
    static final int CLASS_LIMIT = 6;

    /**
     * The most bytes of proclive class files {@code resolveOwner()} + {@code check} may load. Past
     * a fixed cost per class, a cold JVM's application class loader reads, and its verifier checks,
     * every byte of every class it loads, cold methods included (about 0.02 ms a kilobyte here):
     * about 31,000 bytes now, 36,900 while the plain path read its facts through {@code ProcView},
     * 76,800 before it left the checker, the walk and the SPI off it; the margin is for other
     * compilers' class files.
     */
    static final int BYTE_LIMIT = 34_000;

    /** What {@code -Xlog:class+load} says a class came from when it came from the JVM's class-data archive. */
    private static final String ARCHIVED = "shared objects file";

    /**
     * What a fresh JVM on {@code classPath} loads running {@code main}: class name (a hidden class's
     * address dropped) to where it came from ({@code source:} of {@code -Xlog:class+load}).
     */
    private static java.util.Map<String, String> loaded(Path dir, String classPath, Class<?> main) throws Exception {
        return loaded(dir, List.of(), classPath, main);
    }

    /** As {@link #loaded(Path, String, Class)}, the JVM started by {@code launcher} (a command that runs its arguments). */
    private static java.util.Map<String, String> loaded(Path dir, List<String> launcher, String classPath, Class<?> main)
            throws Exception {
        Path log = dir.resolve(main.getSimpleName() + ".classes");
        List<String> command = new java.util.ArrayList<>(launcher);
        command.addAll(List.of(java(), "-Xlog:class+load=info:file=" + log + ":none", "-cp", classPath, main.getName()));
        run(command);
        java.util.Map<String, String> classes = new java.util.TreeMap<>();
        for (String line : java.nio.file.Files.readAllLines(log)) {
            String[] parts = line.strip().split(" source: ", 2);
            String name = parts[0];
            int hidden = name.indexOf("/0x");
            classes.put(hidden < 0 ? name : name.substring(0, hidden), parts.length > 1 ? parts[1] : "");
        }
        assertThat(classes).as("the log of " + main.getSimpleName()).containsKey(main.getName());
        return classes;
    }

    /**
     * The library with JNA and Jackson beside it, as an application has them (the CLI jar holds all
     * three), then the mains.
     */
    private static String applicationClassPath() {
        return Path.of(System.getProperty("proclive.cliJar")).toAbsolutePath() + File.pathSeparator + testClasses();
    }

    /** The proclive classes among {@code loaded}, the main itself aside. */
    private static List<String> procliveClasses(java.util.Collection<String> loaded) {
        return loaded.stream().filter(c -> c.startsWith("dev.proclive."))
                .filter(c -> !c.equals(ColdStartMain.class.getName())).toList();
    }

    /** The size of the class file of {@code name}, as the build wrote it. */
    private static int classFileBytes(String name) throws Exception {
        try (java.io.InputStream in = ColdStartIT.class.getClassLoader()
                .getResourceAsStream(name.replace('.', '/') + ".class")) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes().length;
        }
    }

    @Test
    void theHookPathLoadsFewClassesAndNothingItDoesNotNeed(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        String classPath = applicationClassPath();
        java.util.Map<String, String> empty = loaded(dir, classPath, EmptyMain.class);
        java.util.Map<String, String> cold = loaded(dir, classPath, ColdStartMain.class);
        java.util.Set<String> added = new java.util.TreeSet<>(cold.keySet());
        added.removeAll(empty.keySet());

        List<String> proclive = procliveClasses(added);
        assertThat(proclive).as("proclive classes on the hook path").hasSizeLessThanOrEqualTo(CLASS_LIMIT)
                .noneMatch(c -> c.startsWith("dev.proclive.lease.") || c.startsWith("dev.proclive.etcd.")
                        || c.startsWith("dev.proclive.cli."))
                .noneMatch(c -> c.contains("Lambda") || c.endsWith("$1"));
        int bytes = 0;
        for (String c : proclive) {
            bytes += classFileBytes(c);
        }
        assertThat(bytes).as("bytes of the proclive class files the hook path loads: " + proclive)
                .isLessThanOrEqualTo(BYTE_LIMIT);
        assertThat(added).as("classes the hook path loads that an empty main does not")
                .noneMatch(c -> c.startsWith("com.sun.jna.") || c.startsWith("com.fasterxml.jackson."))
                .noneMatch(c -> c.startsWith("java.lang.invoke.")) // lambdas, method handles, indy concatenation
                .noneMatch(c -> c.startsWith("java.lang.ProcessHandle"))
                .noneMatch(c -> c.endsWith("Exception") || c.endsWith("Error")); // thrown, or linked by a catch

        java.util.Set<String> thrown = thrown(dir, classPath, ColdStartMain.class);
        thrown.removeAll(thrown(dir, classPath, EmptyMain.class));
        assertThat(thrown).as("exceptions thrown on the hook path (-Xlog:exceptions)").isEmpty();
    }

    /**
     * {@code bench/coldstart.sh}'s floor stays a floor: it comes to the answer the path comes to,
     * and with {@code api} loads the three types the call names and no other proclive class.
     */
    @Test
    void theBenchFloorAnswersAsThePathDoesAndLoadsOnlyTheApi(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        String classPath = applicationClassPath();
        Path log = dir.resolve("floor.classes");
        String floor = run(List.of(java(), "-Xlog:class+load=info:file=" + log + ":none", "-cp", classPath,
                FloorMain.class.getName(), "api"));
        assertThat(floor).as("the floor's answer").isEqualTo(run(List.of(java(), "-cp", classPath,
                ColdStartMain.class.getName())));
        List<String> proclive = java.nio.file.Files.readAllLines(log).stream().map(l -> l.strip().split(" ", 2)[0])
                .filter(c -> c.startsWith("dev.proclive.") && !c.equals(FloorMain.class.getName())).toList();
        assertThat(proclive).as("proclive classes the floor loads")
                .containsExactlyInAnyOrder("dev.proclive.ProcLive", "dev.proclive.Identity", "dev.proclive.Liveness");
    }

    /**
     * A hook whose walk ends without an owner (here at pid 1 of a fresh PID namespace, a shell, which
     * is never one) learns so on the plain path too: the general walk, the checker and the SPI stay
     * unloaded.
     */
    @Test
    void aWalkThatEndsWithoutAnOwnerStaysOnThePlainPath(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to make a PID namespace with its own /proc; runs in CI as root");
        String classPath = applicationClassPath();
        // sh stays pid 1 (not exec'd away by a last command), the JVM its child
        List<String> launcher = List.of("unshare", "-pf", "--mount-proc", "sh", "-c", "\"$@\"; exit $?", "sh");
        java.util.Map<String, String> cold = loaded(dir, launcher, classPath, ColdStartMain.class);
        List<String> proclive = procliveClasses(cold.keySet());
        assertThat(proclive).as("proclive classes on a hook path that finds no owner")
                .hasSizeLessThanOrEqualTo(CLASS_LIMIT)
                .doesNotContain(AncestorWalk.class.getName(), LivenessChecker.class.getName());
    }

    /**
     * A JDK class the JVM's class-data archive holds costs next to nothing to load; one it must find
     * in the run-time image, parse and link (or spin, as a lambda's forms) costs a good part of a
     * millisecond. The hook path loads none beyond what an empty main loads.
     */
    @Test
    void theHookPathLoadsNoJdkClassFromOutsideTheArchive(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        String classPath = applicationClassPath();
        java.util.Map<String, String> empty = loaded(dir, classPath, EmptyMain.class);
        assumeTrue(empty.containsValue(ARCHIVED), "this JDK runs without its default class-data archive");
        java.util.Map<String, String> cold = loaded(dir, classPath, ColdStartMain.class);
        List<String> unarchived = cold.keySet().stream().filter(c -> !empty.containsKey(c))
                .filter(c -> !c.startsWith("dev.proclive.")).filter(c -> !ARCHIVED.equals(cold.get(c)))
                .map(c -> c + " (" + cold.get(c) + ")").toList();
        assertThat(unarchived).as("JDK classes the hook path loads from outside the JVM's class-data archive")
                .isEmpty();
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
        assertThat(out).contains("dev.proclive.linux.ProcMount").contains("ALIVE");
        assertThat(out.lines().filter(l -> l.contains("com.sun.jna"))).isEmpty();
    }
}
