package dev.proclive.cli;

import dev.proclive.Eventually;
import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code target/proclive}, the launcher: the same output and exit status as {@code java -jar},
 * through a symbolic link; the class-data archive the build made beside the jar used only when it
 * is as trusted as the jar (this user's, not a link, its size intact), never a crash when damaged,
 * and never a word of its own; java always exec'd.
 */
@EnabledOnOs(OS.LINUX)
class LauncherIT {

    @TempDir
    Path tmp;

    /** The links a test made into the build's files go first: the temporary directory then holds none to warn of. */
    @org.junit.jupiter.api.AfterEach
    void removeLinks() throws IOException {
        try (Stream<Path> all = Files.walk(tmp)) {
            for (Path p : all.filter(Files::isSymbolicLink).toList()) {
                Files.delete(p);
            }
        }
    }

    static Path launcher() {
        return Cli.jar().resolveSibling("proclive");
    }

    /**
     * A copy of the launcher, the jar and its archive in {@code dir}, as an install would lay them out,
     * after its first run there: the run that makes the archive for the jar where it now is.
     */
    private Path install(Path dir) throws Exception {
        Path proclive = copy(dir, true);
        Cli.Result first = run(proclive, Path.of(Cli.java()), "", "--version");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(recorded(proclive)[2]).as("made for the jar where it is")
                .isEqualTo(proclive.resolveSibling("proclive-cli.jar").toRealPath().toString());
        return proclive;
    }

    /** The four files copied into {@code dir}, with their times ({@code cp -p}) or new ones ({@code cp}). */
    private static Path copy(Path dir, boolean keepTimes) throws Exception {
        Files.createDirectories(dir);
        for (String f : List.of("proclive", "proclive-cli.jar", "proclive-cli.jsa", "proclive-cli.jsa.size")) {
            if (keepTimes) {
                Files.copy(launcher().resolveSibling(f), dir.resolve(f), StandardCopyOption.COPY_ATTRIBUTES);
            } else {
                Files.copy(launcher().resolveSibling(f), dir.resolve(f));
                Files.setPosixFilePermissions(dir.resolve(f), Files.getPosixFilePermissions(launcher().resolveSibling(f)));
            }
        }
        return dir.resolve("proclive");
    }

    /** The archive's size file: size, kind, the jar it was made from. */
    private static String[] recorded(Path proclive) throws Exception {
        return Files.readString(proclive.resolveSibling("proclive-cli.jsa.size")).strip().split(" ", 3);
    }

    /**
     * Whether the JVM maps the archive beside {@code proclive} for its jar, asked so that a refusal is
     * an error rather than a quiet plain start ({@code -Xshare:on}, {@code -XX:AOTMode=on}).
     */
    private static boolean jvmTakes(Path proclive) throws Exception {
        Path dir = proclive.getParent().toRealPath();
        String archive = dir.resolve("proclive-cli.jsa").toString();
        String jar = dir.resolve("proclive-cli.jar").toString();
        List<String> command = new ArrayList<>(List.of(Cli.java(), "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData"));
        switch (recorded(proclive)[1]) {
            case "aot" -> command.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-XX:AOTMode=on",
                    "-XX:AOTCache=" + archive, "-cp", jar, "dev.proclive.cli.Main"));
            case "cds-jar" -> command.addAll(List.of("-Xshare:on", "-XX:SharedArchiveFile=" + archive, "-jar", jar));
            default -> command.addAll(List.of("-Xshare:on", "-XX:SharedArchiveFile=" + archive, "-cp", jar,
                    "dev.proclive.cli.Main"));
        }
        command.add("--version");
        Cli.Result r = Cli.exec(command, "");
        return r.exit() == 0 && r.out().startsWith("proclive ");
    }

    /**
     * A {@code java} that writes the arguments it was given to {@code log}, then runs the real one:
     * tells whether the launcher passed the archive.
     */
    private Path recordingJava(Path log) throws Exception {
        Path java = tmp.resolve("java-recording");
        Files.writeString(java, "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + Cli.shellQuoted(List.of(log.toString()))
                + "\nexec " + Cli.shellQuoted(List.of(Cli.java())) + " \"$@\"\n");
        java.toFile().setExecutable(true, false);
        java.toFile().setReadable(true, false);
        return java;
    }

    private static Cli.Result run(Path launcher, Path java, String stdin, String... args) {
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(List.of(args));
        Map<String, String> env = new HashMap<>();
        env.put("PATH", "/usr/bin:/bin");
        env.put("PROCLIVE_JAVA", java.toString());
        return Cli.exec(command, stdin.getBytes(StandardCharsets.UTF_8), env);
    }

    private boolean usedArchive(Path log) throws Exception {
        return Files.readAllLines(log).stream()
                .anyMatch(a -> a.startsWith("-XX:SharedArchiveFile=") || a.startsWith("-XX:AOTCache="));
    }

    @Test
    void itIsBuiltExecutableBesideTheJarWithAnArchiveOnlyItsOwnerCanWrite() throws Exception {
        assertThat(Files.isExecutable(launcher())).isTrue();
        Path archive = launcher().resolveSibling("proclive-cli.jsa");
        assertThat(archive).as("made by the build from this jar").isRegularFile();
        assertThat(Files.getPosixFilePermissions(archive)).extracting(Enum::name)
                .containsExactlyInAnyOrder("OWNER_READ", "OWNER_WRITE", "GROUP_READ", "OTHERS_READ");
        String[] made = recorded(launcher());
        assertThat(made[0]).as("its size, as the build wrote it").isEqualTo(Long.toString(Files.size(archive)));
        assertThat(made[1]).as("its kind: the JDK that made it").isEqualTo(Runtime.version().feature() >= 25 ? "aot"
                : Runtime.version().feature() >= 24 ? "cds-jar" : "cds");
        assertThat(Files.getLastModifiedTime(archive))
                .as("complete before the file that describes it was written")
                .isLessThanOrEqualTo(Files.getLastModifiedTime(archive.resolveSibling("proclive-cli.jsa.size")));
        assertThat(made[2]).as("the jar it was made from, by the path the JVM checks")
                .isEqualTo(Cli.jar().toRealPath().toString());
        assertThat(launcher().resolveSibling("proclive-cli.jsa.tmp")).as("only complete archives are named").doesNotExist();
        assertThat(jvmTakes(launcher())).as("the JVM maps it for this jar, not merely is told of it").isTrue();
    }

    @Test
    void aCopyInstalledElsewhereMakesItsOwnArchiveOnItsFirstRunAndTheJvmMapsIt() throws Exception {
        for (boolean keepTimes : List.of(false, true)) { // cp, and cp -p
            Path proclive = copy(tmp.resolve("opt" + keepTimes).resolve("proclive"), keepTimes);
            assertThat(jvmTakes(proclive)).as("the build's archive names the build's jar: refused here").isFalse();
            Path log = tmp.resolve("args");
            Path java = recordingJava(log);
            Cli.Result first = run(proclive, java, "", "--version");
            assertThat(first.out()).isEqualTo(Cli.run("--version").out());
            assertThat(first.err()).as("not a word of its own").isEmpty();
            assertThat(first.exit()).isZero();
            String[] made = recorded(proclive);
            Path archive = proclive.resolveSibling("proclive-cli.jsa");
            assertThat(made[2]).isEqualTo(proclive.resolveSibling("proclive-cli.jar").toRealPath().toString());
            assertThat(made[1]).isEqualTo(recorded(launcher())[1]);
            assertThat(made[0]).isEqualTo(Long.toString(Files.size(archive)));
            assertThat(usedArchive(log)).isTrue();
            assertThat(jvmTakes(proclive)).as("made for this place: mapped").isTrue();
            assertThat(Files.getPosixFilePermissions(archive)).extracting(Enum::name)
                    .containsExactlyInAnyOrder("OWNER_READ", "OWNER_WRITE", "GROUP_READ", "OTHERS_READ");
            try (Stream<Path> files = Files.list(proclive.getParent())) {
                assertThat(files.map(f -> f.getFileName().toString())).as("nothing half made left beside it")
                        .containsExactlyInAnyOrder("proclive", "proclive-cli.jar", "proclive-cli.jsa", "proclive-cli.jsa.size");
            }
            FileTime madeAt = Files.getLastModifiedTime(archive);
            Cli.Result second = run(proclive, java, "", "--version");
            assertThat(second.exit()).isZero();
            assertThat(Files.getLastModifiedTime(archive)).as("made once").isEqualTo(madeAt);
            assertThat(usedArchive(log)).isTrue();
        }
    }

    @Test
    void firstRunsAtOnceLeaveOneWholeArchive() throws Exception {
        Path proclive = copy(tmp.resolve("opt").resolve("proclive"), false);
        String id = "{\"pid\":1,\"start\":\"1\",\"host\":\"elsewhere\"}";
        List<Process> runs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            runs.add(new ProcessBuilder(proclive.toString(), "check", id).redirectErrorStream(true).start());
        }
        for (Process p : runs) {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(out).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_host\"}\n");
            assertThat(p.exitValue()).isEqualTo(2);
        }
        assertThat(jvmTakes(proclive)).isTrue();
        assertThat(recorded(proclive)[0]).isEqualTo(Long.toString(Files.size(proclive.resolveSibling("proclive-cli.jsa"))));
        try (Stream<Path> files = Files.list(proclive.getParent())) {
            assertThat(files).hasSize(4);
        }
    }

    @Test
    void aCopyWhosePathCannotBeRecordedOnOneLineRunsPlainlyAndWritesNothing() throws Exception {
        Path proclive = copy(tmp.resolve("two\nlines"), false);
        String before = Files.readString(proclive.resolveSibling("proclive-cli.jsa.size"));
        Path log = tmp.resolve("args");
        Cli.Result r = run(proclive, recordingJava(log), "", "--version");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).startsWith("proclive ");
        assertThat(usedArchive(log)).isFalse();
        assertThat(Files.readString(proclive.resolveSibling("proclive-cli.jsa.size"))).isEqualTo(before);
    }

    @Test
    void aJvmThatCannotMakeAnArchiveIsAskedOnceAndTheCommandRunsPlainly() throws Exception {
        Path proclive = copy(tmp.resolve("opt").resolve("proclive"), false);
        Path tries = tmp.resolve("tries");
        Path java = tmp.resolve("java-without-archives");
        Files.writeString(java, "#!/bin/sh\nfor a; do case $a in -XX:ArchiveClassesAtExit=*|-XX:AOTCacheOutput=*) echo try >> "
                + Cli.shellQuoted(List.of(tries.toString())) + "; exit 1 ;; esac; done\nexec "
                + Cli.shellQuoted(List.of(Cli.java())) + " \"$@\"\n");
        java.toFile().setExecutable(true, false);
        for (int i = 0; i < 3; i++) {
            Cli.Result r = run(proclive, java, "", "--version");
            assertThat(r.exit()).isZero();
            assertThat(r.out()).startsWith("proclive ");
            assertThat(r.err()).isEmpty();
        }
        assertThat(Files.readAllLines(tries)).as("asked once, not on every run").hasSize(1);
        String[] made = recorded(proclive);
        assertThat(made[0] + " " + made[1]).isEqualTo("0 none");
        assertThat(proclive.resolveSibling("proclive-cli.jsa")).as("the other place's archive is not kept").doesNotExist();
    }

    @Test
    void itSaysWhatJavaJarSaysWithItsArchiveAndWithoutAWordOfItsOwn() throws Exception {
        Path log = tmp.resolve("args");
        Path java = recordingJava(log);
        String id = "{\"pid\":1,\"start\":\"1\",\"host\":\"elsewhere\"}";
        Cli.Result plain = Cli.runWithStdin(id, "check");
        Cli.Result warm = run(launcher(), java, id, "check");
        assertThat(usedArchive(log)).as("the build's archive, as trusted as the jar").isTrue();
        assertThat(warm.out()).isEqualTo(plain.out()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_host\"}\n");
        assertThat(warm.exit()).isEqualTo(plain.exit()).isEqualTo(2);
        assertThat(warm.err()).isEmpty();
        Cli.Result usage = run(launcher(), java, "", "frobnicate");
        assertThat(usage.exit()).isEqualTo(64);
        assertThat(usage.err()).isEqualTo(Cli.run("frobnicate").err());
    }

    @Test
    void throughALinkAndWithoutHomeItRunsAllTheSame() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path link = Files.createSymbolicLink(bin.resolve("proclive"), launcher());
        Path log = tmp.resolve("args");
        Cli.Result linked = run(link, recordingJava(log), "", "--version");
        assertThat(linked.out()).startsWith("proclive ");
        assertThat(linked.exit()).isZero();
        assertThat(linked.err()).isEmpty();
        assertThat(usedArchive(log)).isTrue();
        assertThat(Path.of("/nonexistent")).as("no cache is made anywhere, HOME or not").doesNotExist();
    }

    @ParameterizedTest
    @ValueSource(strings = {"flipped", "truncated", "block", "empty"})
    void aDamagedArchiveIsNeverACrash(String damage) throws Exception {
        Path proclive = install(tmp.resolve("install"));
        Path archive = proclive.resolveSibling("proclive-cli.jsa");
        byte[] bytes = Files.readAllBytes(archive);
        switch (damage) {
            case "flipped" -> bytes[bytes.length / 2] ^= 0x5a;
            case "block" -> java.util.Arrays.fill(bytes, 8192, 8192 + 4096, (byte) 0xff);
            case "truncated" -> bytes = java.util.Arrays.copyOf(bytes, 4096);
            default -> bytes = new byte[0];
        }
        Files.write(archive, bytes);
        Path cwd = Files.createDirectories(tmp.resolve("cwd"));
        List<String> command = new ArrayList<>(List.of(proclive.toString(), "--version"));
        Process p = new ProcessBuilder(command).directory(cwd.toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(damage + ": " + err).isZero();
        assertThat(out).isEqualTo(Cli.run("--version").out());
        assertThat(err).isEmpty();
        try (Stream<Path> left = Files.list(cwd)) {
            assertThat(left).as("no hs_err_pid*.log left behind").isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"proclive-cli.jsa", "proclive-cli.jsa.size", "proclive-cli.jar", "."})
    void anArchiveGroupOrOthersCouldHaveWrittenIsNeverUsed(String writable) throws Exception {
        Path proclive = install(tmp.resolve("install"));
        Path log = tmp.resolve("args");
        Path java = recordingJava(log);
        run(proclive, java, "", "--version");
        assertThat(usedArchive(log)).as("the install as built").isTrue();
        for (String mode : List.of("rwxrwxr-x", "rwxr-xrwx")) {
            Path f = proclive.resolveSibling(writable).normalize();
            java.util.Set<PosixFilePermission> before = Files.getPosixFilePermissions(f);
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(
                    Files.isDirectory(f) ? mode : mode.replace('x', '-')));
            Cli.Result r = run(proclive, java, "", "--version");
            assertThat(r.out()).startsWith("proclive ");
            assertThat(r.exit()).isZero();
            assertThat(usedArchive(log)).as(writable + " " + mode).isFalse();
            Files.setPosixFilePermissions(f, before);
        }
    }

    @Test
    void anArchiveWrittenAfterTheBuildIsNeverUsedEvenWithItsSize() throws Exception {
        Path proclive = install(tmp.resolve("install"));
        Path archive = proclive.resolveSibling("proclive-cli.jsa");
        Path log = tmp.resolve("args");
        Path java = recordingJava(log);
        Files.write(archive, Files.readAllBytes(archive)); // the same bytes, written later
        Files.setLastModifiedTime(archive, FileTime.fromMillis(
                Files.getLastModifiedTime(proclive.resolveSibling("proclive-cli.jsa.size")).toMillis() + 2000));
        run(proclive, java, "", "--version");
        assertThat(usedArchive(log)).isFalse();
        Files.setLastModifiedTime(archive, FileTime.fromMillis(
                Files.getLastModifiedTime(proclive.resolveSibling("proclive-cli.jsa.size")).toMillis() - 2000));
        run(proclive, java, "", "--version");
        assertThat(usedArchive(log)).as("its time set back, its change time (which nobody sets back) says it was written")
                .isFalse();
    }

    /**
     * Bytes overwritten in place, its size and times kept ({@code touch -r}): a damaged archive the
     * JVM would crash on (SIGSEGV, its fatal-error banner on stdout, an hs_err file in the working
     * directory) is refused by its change time, and the command runs plainly.
     */
    @ParameterizedTest
    @ValueSource(ints = {4096, 2})
    void anArchiveDamagedInPlaceWithItsSizeAndTimesKeptIsNeverUsed(int eighths) throws Exception {
        Path proclive = install(tmp.resolve("install"));
        Path archive = proclive.resolveSibling("proclive-cli.jsa");
        Path log = tmp.resolve("args");
        Path java = recordingJava(log);
        run(proclive, java, "", "--version");
        assertThat(usedArchive(log)).as("the install as built").isTrue();
        FileTime modified = Files.getLastModifiedTime(archive);
        long size = Files.size(archive);
        try (FileChannel f = FileChannel.open(archive, StandardOpenOption.WRITE)) {
            long at = eighths > 8 ? eighths : size * eighths / 8;
            f.write(ByteBuffer.wrap(new byte[4096]), Math.min(at, size - 4096));
        }
        Files.setLastModifiedTime(archive, modified);
        assertThat(Files.size(archive)).isEqualTo(size);
        Cli.Result r = run(proclive, java, "", "--version");
        assertThat(usedArchive(log)).as("refused").isFalse();
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(Cli.run("--version").out());
    }

    @Test
    void anArchiveAnotherUserCouldHavePlantedIsNeverUsed() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to give files to another user");
        Path proclive = install(tmp.resolve("install"));
        Path archive = proclive.resolveSibling("proclive-cli.jsa");
        Path log = tmp.resolve("args");
        Path java = recordingJava(log);
        Files.setOwner(archive, archive.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        Cli.Result planted = run(proclive, java, "", "--version");
        assertThat(planted.exit()).isZero();
        assertThat(planted.out()).startsWith("proclive ");
        assertThat(usedArchive(log)).as("an archive of another user's is code of another user's").isFalse();

        Files.delete(archive);
        Files.createSymbolicLink(archive, launcher().resolveSibling("proclive-cli.jsa"));
        run(proclive, java, "", "--version");
        assertThat(usedArchive(log)).as("nor one behind a link").isFalse();

        // nobody running an install of another user's maps nothing of that user's choosing; root's is
        // trusted as root's java is, and a copy root has not run yet is left as it is
        Path shared = copy(tmp.resolve("shared"), false);
        for (Path p : List.of(tmp, shared.getParent(), shared, shared.resolveSibling("proclive-cli.jar"),
                shared.resolveSibling("proclive-cli.jsa"), shared.resolveSibling("proclive-cli.jsa.size"), java)) {
            p.toFile().setReadable(true, false);
            p.toFile().setExecutable(true, false);
        }
        Files.writeString(log, "");
        log.toFile().setWritable(true, false);
        String before = Files.readString(shared.resolveSibling("proclive-cli.jsa.size"));
        Cli.Result asNobody = asNobody(java, shared);
        assertThat(asNobody.exit()).as(asNobody.err()).isZero();
        assertThat(usedArchive(log)).as("made for another place, and not nobody's to make again").isFalse();
        assertThat(Files.readString(shared.resolveSibling("proclive-cli.jsa.size"))).as("nothing written").isEqualTo(before);

        run(shared, java, "", "--version"); // root's first run makes it for here
        asNobody(java, shared);
        assertThat(usedArchive(log)).as("root's install, made by root").isTrue();

        Cli.Result given = Cli.exec(List.of("chown", "-R", "4242:4242", shared.getParent().toString()), "");
        assertThat(given.exit()).as(given.err()).isZero();
        asNobody(java, shared);
        assertThat(usedArchive(log)).as("an install of user 4242's, run by nobody").isFalse();
    }

    /**
     * A directory made current before the switch to another user (root's {@code cd}, then {@code
     * setpriv} or {@code su} to nobody) that this user may not enter: the launcher never needs to come
     * back to it, and java runs in it, as the command was started there.
     */
    @Test
    void runByNobodyFromADirectoryNobodyMayNotEnterItRunsThere() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run the launcher as nobody");
        Path shared = copy(tmp.resolve("shared"), false);
        Path log = tmp.resolve("cwd");
        Path java = tmp.resolve("java-in");
        Files.writeString(java, "#!/bin/sh\npwd -P > " + Cli.shellQuoted(List.of(log.toString()))
                + "\nexec " + Cli.shellQuoted(List.of(Cli.java())) + " \"$@\"\n");
        Files.writeString(log, "");
        for (Path p : List.of(tmp, shared.getParent(), shared, shared.resolveSibling("proclive-cli.jar"),
                shared.resolveSibling("proclive-cli.jsa"), shared.resolveSibling("proclive-cli.jsa.size"), java, log)) {
            p.toFile().setReadable(true, false);
            p.toFile().setExecutable(true, false);
        }
        log.toFile().setWritable(true, false);
        Path locked = Files.createDirectories(tmp.resolve("locked"));
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwx------"));
        String asNobody = "cd " + Cli.shellQuoted(List.of(locked.toString())) + " && exec " + Cli.shellQuoted(List.of(
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "PROCLIVE_JAVA=" + java,
                shared.toString(), "--version"));
        Cli.Result r = Cli.exec(List.of("sh", "-c", asNobody), "");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo(Cli.run("--version").out());
        assertThat(r.err()).isEmpty();
        assertThat(Files.readString(log).strip()).as("java runs where the command was started")
                .isEqualTo(locked.toRealPath().toString());
    }

    private static Cli.Result asNobody(Path java, Path proclive) {
        return Cli.exec(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                "PROCLIVE_JAVA=" + java, proclive.toString(), "--version"), "");
    }

    @Test
    void javaIsExecdSoSignalsReachIt() throws Exception {
        String self = new com.fasterxml.jackson.databind.ObjectMapper()
                .writeValueAsString(dev.proclive.ProcLive.current().orElseThrow()); // alive: the wait goes on
        Process p = new ProcessBuilder(launcher().toString(), "wait", self, "--timeout", "30").start();
        try {
            Eventually.until("the launcher's own pid runs java: no sh in between", java.time.Duration.ofSeconds(30),
                    () -> ProcessHandle.of(p.pid()).flatMap(h -> h.info().command()).orElse("").endsWith("java"));
        } finally {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aQuitToLeaseRunPrintsNoThreadDumpIntoTheCommandsOutput() throws Exception {
        Path dir = tmp.resolve("leases");
        // SIGQUIT back to its default first: inherited ignored (a build in a shell's background), it would prove nothing
        Process run = new ProcessBuilder("python3", "-c", "import os, signal, sys; signal.signal(signal.SIGQUIT, "
                + "signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])", launcher().toString(), "lease", "run", "build",
                "--dir", dir.toString(), "--", "sh", "-c", "echo ready; sleep 2; echo done").redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(run.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("ready");
        new ProcessBuilder("kill", "-QUIT", Long.toString(run.pid())).start().waitFor();
        StringBuilder rest = new StringBuilder();
        for (String line; (line = out.readLine()) != null; ) {
            rest.append(line).append('\n');
        }
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(rest.toString()).as("the command's output, and only it").isEqualTo("done\n");
        assertThat(run.exitValue()).isZero();
    }
}
