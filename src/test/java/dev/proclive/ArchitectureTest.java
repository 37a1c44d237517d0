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

    /** The compiled classes of proclive, as the build wrote them. */
    private static List<Path> classFiles() throws Exception {
        Path root = Path.of(ProcLive.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (Stream<Path> files = Files.walk(root.resolve("dev/proclive"))) {
            return files.filter(p -> p.toString().endsWith(".class")).collect(Collectors.toList());
        }
    }

    /**
     * Every CONSTANT_Utf8 of a class file's constant pool (JVMS 4.4): the names of every class,
     * method and field it refers to, however the source spelled them (an import, a fully qualified
     * name, a lambda), and nothing from comments.
     */
    static List<String> constantPoolStrings(byte[] classFile) throws IOException {
        java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(classFile));
        assertThat(in.readInt()).as("class file magic").isEqualTo(0xCAFEBABE);
        in.readUnsignedShort();
        in.readUnsignedShort();
        int count = in.readUnsignedShort();
        List<String> strings = new java.util.ArrayList<>();
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> strings.add(in.readUTF());
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++; // eight-byte constants take two slots
                }
                case 7, 8, 16, 19, 20 -> in.readUnsignedShort();
                case 9, 10, 11, 12, 17, 18 -> in.readInt();
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                default -> throw new AssertionError("unknown constant pool tag " + tag);
            }
        }
        return strings;
    }

    /** The packages that touch the OS: the only ones where JNA may appear. */
    static final List<String> PLATFORM_PACKAGES = List.of("linux", "macos", "posix", "windows");

    @Test
    void jnaStaysInThePackagesThatTouchTheOs() throws Exception {
        List<String> offenders = new java.util.ArrayList<>();
        List<Path> classes = classFiles();
        assertThat(classes).hasSizeGreaterThan(20);
        for (Path c : classes) {
            String name = c.toString().replace('\\', '/');
            String pkg = name.substring(name.indexOf("/dev/proclive/") + "/dev/proclive/".length(), name.lastIndexOf('/') + 1);
            if (PLATFORM_PACKAGES.stream().anyMatch(p -> pkg.equals(p + "/"))) {
                continue;
            }
            if (constantPoolStrings(Files.readAllBytes(c)).stream().anyMatch(u -> u.contains("com/sun/jna"))) {
                offenders.add(name);
            }
        }
        assertThat(offenders).as("classes that refer to JNA outside " + PLATFORM_PACKAGES).isEmpty();
    }

    @Test
    void osNameIsReadInThePlatformSwitchOnly() throws IOException {
        List<String> offenders = sources().stream()
                .filter(p -> read(p).contains("\"os.name\""))
                .filter(p -> !p.startsWith(MAIN.resolve("platform")))
                .map(Path::toString)
                .collect(Collectors.toList());
        assertThat(offenders).isEmpty();
        assertThat(read(MAIN.resolve("platform/Platform.java"))).contains("\"os.name\"");
    }

    @Test
    void theBytecodeCheckSeesJnaWhereItIs() throws Exception {
        Path kill = classFiles().stream().filter(p -> p.toString().endsWith("linux/Kill.class")).findFirst().orElseThrow();
        assertThat(constantPoolStrings(Files.readAllBytes(kill))).anyMatch(u -> u.contains("com/sun/jna/LastErrorException"));
    }

    /** Whether a class file refers to {@code type} (binary name with slashes), or to a class nested in it. */
    private static boolean refersTo(Path classFile, String type) throws IOException {
        return constantPoolStrings(Files.readAllBytes(classFile)).stream()
                .anyMatch(u -> u.equals(type) || u.contains("L" + type + ";") || u.contains(type + "$"));
    }

    @Test
    void theCommandLineCallsOneWay() throws Exception {
        List<Path> cli = classFiles().stream().filter(p -> p.getParent().endsWith("cli")).collect(Collectors.toList());
        assertThat(cli).hasSizeGreaterThan(10);
        List<String> intoMain = new java.util.ArrayList<>();
        List<String> intoTheParser = new java.util.ArrayList<>();
        for (Path c : cli) {
            String name = c.getFileName().toString();
            // Main dispatches; ArchiveTraining is the entry above it that runs it to train the archive.
            if (!name.startsWith("Main") && !name.startsWith("ArchiveTraining") && refersTo(c, "dev/proclive/cli/Main")) {
                intoMain.add(name);
            }
            if (name.startsWith("LeaseActions") && refersTo(c, "dev/proclive/cli/LeaseCommand")) {
                intoTheParser.add(name);
            }
        }
        assertThat(intoMain).as("commands that call back up into Main").isEmpty();
        assertThat(intoTheParser).as("lease actions that call back into the lease command line's parser").isEmpty();
        Path training = cli.stream().filter(p -> p.getFileName().toString().equals("ArchiveTraining.class")).findFirst()
                .orElseThrow();
        assertThat(refersTo(training, "dev/proclive/cli/Main")).as("the check sees a reference where there is one").isTrue();
    }

    @Test
    void jacksonStaysInTheJsonMappingAndTheCli() throws IOException {
        List<String> offenders = sources().stream()
                .filter(p -> read(p).contains("com.fasterxml.jackson"))
                .filter(p -> !p.endsWith("Identity.java") && !p.endsWith("PidDeserializer.java")
                        && !p.endsWith("StrictStringDeserializer.java"))
                .filter(p -> !p.startsWith(MAIN.resolve("lease")))
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
