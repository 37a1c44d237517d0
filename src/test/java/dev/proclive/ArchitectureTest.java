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

    /** The package of a compiled class, as a path under {@code dev/proclive/}: {@code lease/core}. */
    private static String packageOf(Path classFile) {
        String name = classFile.toString().replace('\\', '/');
        String under = name.substring(name.indexOf("/dev/proclive/") + "/dev/proclive/".length());
        return under.contains("/") ? under.substring(0, under.lastIndexOf('/')) : "";
    }

    /** The classes of one package (not its subpackages). */
    private static List<Path> classesOf(String pkg) throws Exception {
        return classFiles().stream().filter(c -> packageOf(c).equals(pkg)).collect(Collectors.toList());
    }

    /** Which of {@code classes} refer to any type in package {@code pkg} (not its subpackages). */
    private static List<String> referringToPackage(List<Path> classes, String pkg) throws IOException {
        List<String> found = new java.util.ArrayList<>();
        String prefix = "dev/proclive/" + pkg + "/";
        for (Path c : classes) {
            boolean refers = constantPoolStrings(Files.readAllBytes(c)).stream().anyMatch(u -> {
                int at = u.indexOf(prefix);
                while (at >= 0) {
                    String rest = u.substring(at + prefix.length());
                    int end = 0;
                    while (end < rest.length() && (Character.isJavaIdentifierPart(rest.charAt(end)) || rest.charAt(end) == '$')) {
                        end++;
                    }
                    if (end < rest.length() && rest.charAt(end) == '/') {
                        at = u.indexOf(prefix, at + 1); // a subpackage
                        continue;
                    }
                    return end > 0;
                }
                return false;
            });
            if (refers) {
                found.add(packageOf(c) + "/" + c.getFileName());
            }
        }
        return found;
    }

    @Test
    void theLeaseIsInLayers() throws Exception {
        List<Path> below = classFiles().stream().filter(c -> packageOf(c).startsWith("lease/")).collect(Collectors.toList());
        assertThat(below).as("the lease's layers").hasSizeGreaterThan(15);
        assertThat(below.stream().filter(c -> refersToSafe(c, "dev/proclive/lease/LeaseStore")).collect(Collectors.toList()))
                .as("classes below the API that name LeaseStore").isEmpty();

        List<String> books = List.of("lease/files", "lease/etcd");
        List<Path> api = classesOf("lease");
        for (String book : books) {
            assertThat(referringToPackage(api, book)).as("API classes that name " + book)
                    .allMatch(c -> c.startsWith("lease/LeaseStore"));
            assertThat(referringToPackage(classesOf("lease/core"), book)).as("the engine names " + book).isEmpty();
            assertThat(referringToPackage(classesOf("lease/book"), book)).as("the seam names " + book).isEmpty();
        }
        assertThat(referringToPackage(api, "lease/files")).as("the check sees the store build its books").isNotEmpty();
        for (String book : books) {
            List<Path> own = classesOf(book);
            assertThat(own).isNotEmpty();
            assertThat(referringToPackage(own, "lease/core")).as(book + " names the engine").isEmpty();
            for (String other : books) {
                if (!other.equals(book)) {
                    assertThat(referringToPackage(own, other)).as(book + " names " + other).isEmpty();
                }
            }
            assertThat(own.stream().filter(c -> refersToSafe(c, "dev/proclive/LivenessChecker")).collect(Collectors.toList()))
                    .as(book + " judges liveness").isEmpty();
        }
        List<Path> seam = classesOf("lease/book");
        assertThat(referringToPackage(seam, "lease/core")).as("the seam names the engine").isEmpty();
        assertThat(seam.stream().filter(c -> refersToSafe(c, "dev/proclive/LivenessChecker")).collect(Collectors.toList()))
                .as("the seam judges liveness").isEmpty();
        List<Path> engine = classesOf("lease/core");
        assertThat(referringToPackage(engine, "platform")).as("the engine picks a platform").isEmpty();
        List<Path> v3 = classesOf("etcd");
        assertThat(v3).isNotEmpty();
        List<String> v3Offenders = new java.util.ArrayList<>();
        for (Path c : v3) {
            if (constantPoolStrings(Files.readAllBytes(c)).stream()
                    .anyMatch(u -> u.contains("dev/proclive/") && !u.contains("dev/proclive/etcd/"))) {
                v3Offenders.add(c.getFileName().toString());
            }
        }
        assertThat(v3Offenders).as("etcd's v3 calls name something of proclive's").isEmpty();
    }

    private static boolean refersToSafe(Path classFile, String type) {
        try {
            return refersTo(classFile, type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void jacksonStaysInTheJsonMappingAndTheCli() throws IOException {
        List<String> offenders = sources().stream()
                .filter(p -> read(p).contains("com.fasterxml.jackson"))
                .filter(p -> !p.endsWith("Identity.java") && !p.endsWith("PidDeserializer.java")
                        && !p.endsWith("StrictStringDeserializer.java")
                        && !p.equals(MAIN.resolve("text/IdentityStream.java")) // the identity's streaming codec
                        && !p.equals(MAIN.resolve("text/StrictJson.java"))) // records' and etcd's strict JSON
                .filter(p -> !p.startsWith(MAIN.resolve("lease")))
                .filter(p -> !p.startsWith(MAIN.resolve("etcd"))) // the lease's etcd client: JSON over HTTP
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
