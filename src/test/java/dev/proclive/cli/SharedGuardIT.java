package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static dev.proclive.Tools.onPath;

import dev.proclive.Children;
import dev.proclive.Cli;
import dev.proclive.Eventually;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory shared by several users locks none of them out: in a group-writable directory
 * without the setgid bit every file a store makes joins the directory's group (and one already
 * there in another group is set right by its owner's next call), and a guard an older version left
 * open to readers (0644) is replaced by its owner's next call that takes its lock, so that a
 * reader's descriptor to the old one holds nobody out. The runs as other users need root
 * ({@code setpriv} to any uid).
 */
@EnabledOnOs(OS.LINUX)
class SharedGuardIT {

    /** A group and two users that exist only as numbers here: setpriv needs no account. */
    private static final int GROUP = 64_190;
    private static final int ALICE = 64_191;
    private static final int BOB = 64_192;

    @RegisterExtension
    final Children children = new Children();

    @TempDir
    Path tmp;

    private static List<String> as(int uid, List<String> command) {
        return OtherUsers.as(uid, uid, GROUP, command);
    }

    /** {@code 0775 root:GROUP}, no setgid bit: a natural {@code chmod g+w}, where new files join their maker's group. */
    private Path groupWritableWithoutSetgid() throws IOException {
        tmp.toFile().setExecutable(true, false);
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setAttribute(shared, "unix:gid", GROUP);
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxr-x"));
        return shared;
    }

    /** Alice's own directory, which others may read but not write: {@code 0755 ALICE}. */
    private Path alicesReadableDirectory() throws IOException {
        tmp.toFile().setExecutable(true, false);
        Path own = Files.createDirectory(tmp.resolve("alices"));
        Files.setAttribute(own, "unix:uid", ALICE);
        Files.setPosixFilePermissions(own, PosixFilePermissions.fromString("rwxr-xr-x"));
        return own;
    }

    private static int group(Path file) throws IOException {
        return (Integer) Files.getAttribute(file, "unix:gid", LinkOption.NOFOLLOW_LINKS);
    }

    private static Object inode(Path file) throws IOException {
        return Files.getAttribute(file, "unix:ino", LinkOption.NOFOLLOW_LINKS);
    }

    private static String mode(Path file) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS));
    }

    private Cli.Result alice(Path jar, String... args) {
        return Cli.exec(as(ALICE, Cli.command(jar, args)), "");
    }

    private Cli.Result bob(Path jar, String... args) {
        return Cli.exec(as(BOB, Cli.command(jar, args)), "");
    }

    @Test
    void aGroupWritableDirectoryWithoutTheSetgidBitLocksNoMemberOut() throws Exception {
        OtherUsers.needed();
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        Path shared = groupWritableWithoutSetgid();
        String dir = shared.toString();
        Cli.Result taken = alice(jar, "lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()));
        assertThat(taken.exit()).as("alice takes it: %s", taken).isZero();
        Cli.Result released = alice(jar, "lease", "release", "build", "--dir", dir, "--fence", "1");
        assertThat(released.exit()).as("and lets it go: %s", released).isZero();
        for (String file : List.of("build.guard", "build.lease")) {
            assertThat(group(shared.resolve(file))).as("%s joined the directory's group", file).isEqualTo(GROUP);
        }

        Cli.Result bob = bob(jar, "lease", "acquire", "build", "--dir", dir,
                "--holder", Long.toString(children.sleeper().pid()));
        assertThat(bob.exit()).as("bob, of the directory's group, takes the free lease: %s", bob).isZero();
        Cli.Result broken = bob(jar, "lease", "break", "build", "--dir", dir);
        assertThat(broken.exit()).as("and may break it: %s", broken).isZero();
    }

    /**
     * A guard its owner made 0644 (a chmod, an older version) in a shared directory: another member is refused,
     * break too, and told who can set it right; nothing is written. Its owner's next call makes it writable again.
     */
    @Test
    void aGuardNotWritableByTheGroupSaysWhoCanSetItRight() throws Exception {
        OtherUsers.needed();
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        Path shared = groupWritableWithoutSetgid();
        String dir = shared.toString();
        String holder = Long.toString(children.sleeper().pid());
        assertThat(alice(jar, "lease", "acquire", "build", "--dir", dir, "--holder", holder).exit()).isZero();
        Path guard = shared.resolve("build.guard");
        Files.setPosixFilePermissions(guard, PosixFilePermissions.fromString("rw-r--r--"));
        byte[] before = Files.readAllBytes(shared.resolve("build.lease"));
        Cli.Result broken = bob(jar, "lease", "break", "build", "--dir", dir);
        assertThat(broken.exit()).as("%s", broken).isNotZero();
        assertThat(broken.err()).contains("rw-r--r--").contains("owner ").contains("group ").contains("its owner's next call")
                .contains("no other user can take, wait for or break the lease");
        assertThat(Files.readAllBytes(shared.resolve("build.lease"))).as("nothing written").isEqualTo(before);
        assertThat(alice(jar, "lease", "release", "build", "--dir", dir, "--fence", "1").exit()).isZero();
        assertThat(mode(guard)).as("its owner's call set it right").isEqualTo("rw-rw----");
        Cli.Result bob = bob(jar, "lease", "acquire", "build", "--dir", dir, "--holder", holder);
        assertThat(bob.exit()).as("%s", bob).isZero();
    }

    @Test
    void aGuardAndRecordInTheWrongGroupAreSetRightByTheirOwnersNextCall() throws Exception {
        OtherUsers.needed();
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        Path shared = groupWritableWithoutSetgid();
        String dir = shared.toString();
        String holder = Long.toString(children.sleeper().pid());
        assertThat(alice(jar, "lease", "acquire", "build", "--dir", dir, "--holder", holder).exit()).isZero();
        for (String file : List.of("build.guard", "build.lease")) { // as a version that left them in her group did
            Files.setAttribute(shared.resolve(file), "unix:gid", ALICE, LinkOption.NOFOLLOW_LINKS);
        }
        Cli.Result locked = bob(jar, "lease", "break", "build", "--dir", dir);
        assumeTrue(locked.exit() == 74, "bob is locked out of a guard in alice's group: " + locked);

        Cli.Result renewed = alice(jar, "lease", "renew", "build", "--dir", dir, "--fence", "1");
        assertThat(renewed.exit()).as("alice renews: %s", renewed).isZero();
        for (String file : List.of("build.guard", "build.lease")) {
            assertThat(group(shared.resolve(file))).as("%s is back in the directory's group", file).isEqualTo(GROUP);
        }
        assertThat(mode(shared.resolve("build.guard"))).isEqualTo("rw-rw----");
        Cli.Result broken = bob(jar, "lease", "break", "build", "--dir", dir);
        assertThat(broken.exit()).as("bob may break it now: %s", broken).isZero();
    }

    /**
     * Bob, who may only read alice's directory, with the guard open read-only since it was 0644: he
     * locks it when the test writes a line to his input, and says {@code locked}.
     */
    private Process readerWithTheGuardOpen(Path guard, boolean lockAtOnce) throws Exception {
        String script = "exec 3<\"$1\"; echo opened; " + (lockAtOnce ? "" : "read go; ")
                + "flock -s 3; echo locked; exec sleep 120";
        Process reader = new ProcessBuilder(as(BOB, List.of("sh", "-c", script, "sh", guard.toString()))).start();
        children.adopt(reader);
        BufferedReader said = new BufferedReader(new InputStreamReader(reader.getInputStream(), StandardCharsets.UTF_8));
        assertThat(said.readLine()).as("bob opened the guard").isEqualTo("opened");
        if (lockAtOnce) {
            assertThat(said.readLine()).as("bob holds the guard's lock").isEqualTo("locked");
        } else {
            readers.add(said);
        }
        return reader;
    }

    private final List<BufferedReader> readers = new ArrayList<>();

    /** Lets the reader started with {@code lockAtOnce} false lock its descriptor, and waits until it did. */
    private void lockNow(Process reader) throws IOException {
        OutputStream in = reader.getOutputStream();
        in.write("go\n".getBytes(StandardCharsets.UTF_8));
        in.flush();
        assertThat(readers.remove(0).readLine()).as("bob holds the lock of the guard he opened").isEqualTo("locked");
    }

    /** Alice's directory with a free lease whose guard is 0644, as every older version left it under umask 022. */
    private Path guardAnOlderVersionLeft0644(Path jar, String holder) throws IOException {
        Path own = alicesReadableDirectory();
        assertThat(alice(jar, "lease", "acquire", "build", "--dir", own.toString(), "--holder", holder).exit()).isZero();
        assertThat(alice(jar, "lease", "release", "build", "--dir", own.toString(), "--fence", "1").exit()).isZero();
        Files.setPosixFilePermissions(own.resolve("build.guard"), PosixFilePermissions.fromString("rw-r--r--"));
        return own;
    }

    @Test
    void aReaderCannotHoldItsWritersOutThroughAGuardAnOlderVersionLeft0644() throws Exception {
        OtherUsers.needed();
        assumeTrue(onPath("flock"), "flock (util-linux) is needed");
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        String holder = Long.toString(children.sleeper().pid());
        Path own = guardAnOlderVersionLeft0644(jar, holder);
        Path guard = own.resolve("build.guard");
        Process reader = readerWithTheGuardOpen(guard, false); // opened while it was 0644, not locked yet

        Cli.Result first = alice(jar, "lease", "acquire", "build", "--dir", own.toString(), "--holder", holder, "--wait", "3");
        assertThat(first.exit()).as("alice takes her free lease: %s", first).isZero();
        assertThat(mode(guard)).as("the guard is alice's alone").isEqualTo("rw-------");
        lockNow(reader); // bob locks what he opened before: the old guard

        for (int call = 0; call < 2; call++) {
            Cli.Result taken = alice(jar, "lease", "acquire", "build", "--dir", own.toString(), "--holder", holder, "--wait", "3");
            assertThat(taken.exit()).as("alice keeps her lease though bob, a reader, locked its old guard (call %d): %s",
                    call + 1, taken).isZero();
        }
        Cli.Result released = alice(jar, "lease", "release", "build", "--dir", own.toString(), "--fence", "2");
        assertThat(released.exit()).as("%s", released).isZero();
        Cli.Result again = alice(jar, "lease", "acquire", "build", "--dir", own.toString(), "--holder", holder);
        assertThat(again.exit()).as("%s", again).isZero();
        assertThat(again.out()).as("fences go on from the old guard's").contains("\"fence\":3");
    }

    @Test
    void aReaderHoldingAnOldGuardsLockBeforeItsOwnersFirstCallIsNamedAndOutlivedNotWaitedForWithoutEnd() throws Exception {
        OtherUsers.needed();
        assumeTrue(onPath("flock"), "flock (util-linux) is needed");
        Path jar = Cli.worldReadableCopy(Files.createDirectory(tmp.resolve("jar")));
        String holder = Long.toString(children.sleeper().pid());
        Path own = guardAnOlderVersionLeft0644(jar, holder);
        Path guard = own.resolve("build.guard");
        Object old = inode(guard);
        Process reader = readerWithTheGuardOpen(guard, true);

        // nothing tells a reader's lock from a writer's stopped inside its section: alice is told, in bounded time
        long start = System.nanoTime();
        Cli.Result refused = alice(jar, "lease", "acquire", "build", "--dir", own.toString(), "--holder", holder, "--wait", "3");
        assertThat(refused.exit()).as("%s", refused).isEqualTo(74);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Eventually.scaled(Duration.ofSeconds(15)));
        assertThat(refused.err()).as("%s", refused).contains("fuser").contains("may be opened by users other than its writers");
        assertThat(mode(guard)).as("nothing was changed").isEqualTo("rw-r--r--");

        reader.destroyForcibly();
        reader.waitFor();
        Cli.Result taken = alice(jar, "lease", "acquire", "build", "--dir", own.toString(), "--holder", holder, "--wait", "3");
        assertThat(taken.exit()).as("once bob let go, alice takes it: %s", taken).isZero();
        assertThat(inode(guard)).as("and the guard bob may have opened is replaced").isNotEqualTo(old);
        assertThat(mode(guard)).isEqualTo("rw-------");
    }
}
