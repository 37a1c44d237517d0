package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the files a store makes are opened to, by its directory's mode: each class of users that may write the
 * directory reads and writes a record, one that may only search it reads it, and only writers open a guard (a reader
 * could hold its lock). In a sticky directory nobody but a file's maker could replace it, so nobody else writes.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class FileModesTest {

    @TempDir
    Path tmp;

    /** A directory of mode {@code octal}. */
    private Path directory(String octal) throws Exception {
        return chmod(Files.createDirectory(tmp.resolve("d" + octal)), octal);
    }

    /** chmod's, so that the sticky and setgid bits are set too. */
    private static Path chmod(Path d, String octal) throws Exception {
        Process chmod = new ProcessBuilder("chmod", octal, d.toString()).inheritIO().start();
        assertThat(chmod.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(chmod.exitValue()).as("chmod %s", octal).isZero();
        return d;
    }

    /** Whether {@code guard}, given permissions {@code permissions}, is exposed. */
    private static boolean exposedAs(FileModes modes, Path guard, String permissions) throws IOException {
        Files.setPosixFilePermissions(guard, PosixFilePermissions.fromString(permissions));
        return modes.exposed(attributes(guard));
    }

    /** A file made as the store makes one (owner-only), then shared as a record or a guard. */
    private static String made(FileModes modes, Path dir, String name, boolean guard) throws IOException {
        Path f = Files.createFile(dir.resolve(name), modes.createAs());
        assertThat(mode(f)).as("created owner-only, whatever the umask").isEqualTo("rw-------");
        modes.share(f, guard);
        return mode(f);
    }

    private static String mode(Path f) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(f));
    }

    private static PosixFileAttributes attributes(Path f) throws IOException {
        return Files.readAttributes(f, PosixFileAttributes.class);
    }

    @ParameterizedTest(name = "a directory of mode {0}: record {1}, guard {2}")
    @CsvSource({
        "0700, rw-------, rw-------, false, false",
        "0750, rw-r-----, rw-------, true, false",
        "0770, rw-rw----, rw-rw----, true, false",
        "2775, rw-rw-r--, rw-rw----, true, false",
        "0755, rw-r--r--, rw-------, true, false",
        "0711, rw-r--r--, rw-------, true, false",
        "0777, rw-rw-rw-, rw-rw-rw-, true, false",
        "0773, rw-rw-rw-, rw-rw-rw-, true, false",
        "0760, rw-------, rw-------, true, false",
        "1777, rw-r--r--, rw-------, true, true",
        "1770, rw-r-----, rw-------, true, true",
    })
    void eachClassOfUsersGetsWhatItMayDoInTheDirectory(String octal, String record, String guard, boolean shared,
                                                        boolean sticky) throws Exception {
        Path dir = directory(octal);
        FileModes modes = FileModes.of(dir);
        assertThat(modes.sticky()).as("sticky").isEqualTo(sticky);
        assertThat(modes.guardsShared()).as("guards shared").isEqualTo(shared);
        assertThat(made(modes, dir, "build.lease", false)).as("a record").isEqualTo(record);
        assertThat(made(modes, dir, "build.guard", true)).as("a guard").isEqualTo(guard);
    }

    @Test
    void aGuardOpenToAClassThatMayNotWriteTheDirectoryIsExposed() throws Exception {
        Path dir = directory("2775");
        FileModes modes = FileModes.of(dir);
        Path guard = Files.createFile(dir.resolve("build.guard"));
        for (String safe : new String[] {"rw-rw----", "rw-------", "rw-r-----", "r--------"}) {
            assertThat(exposedAs(modes, guard, safe)).as(safe).isFalse();
        }
        for (String open : new String[] {"rw-rw-r--", "rw-rw--w-", "rw-rw-rw-", "rw----r--"}) {
            assertThat(exposedAs(modes, guard, open)).as(open).isTrue();
        }
    }

    @Test
    void aGuardTheGroupMayOnlyReadTheDirectoryOfIsExposedToIt() throws Exception {
        Path dir = directory("0750");
        FileModes modes = FileModes.of(dir);
        Path guard = Files.createFile(dir.resolve("build.guard"));
        assertThat(exposedAs(modes, guard, "rw-r-----")).as("a reader could hold its lock").isTrue();
        assertThat(exposedAs(modes, guard, "rw--w----")).as("nor may it write").isTrue();
        assertThat(exposedAs(modes, guard, "rw-------")).isFalse();
    }

    @Test
    void inADirectoryOfItsOwnerAloneNothingIsExposedOrShared() throws Exception {
        Path dir = directory("0700");
        FileModes modes = FileModes.of(dir);
        Path guard = Files.createFile(dir.resolve("build.guard"));
        assertThat(exposedAs(modes, guard, "rw-rw-rw-")).as("nobody else may enter the directory").isFalse();
        modes.shareGuard(guard, attributes(guard));
        assertThat(mode(guard)).as("left as it is").isEqualTo("rw-rw-rw-");
    }

    @Test
    void aGuardMadeBeforeTheDirectoryWasSharedIsGivenWhatItLacks() throws Exception {
        Path dir = directory("0700");
        Path guard = Files.createFile(dir.resolve("build.guard"), FileModes.of(dir).createAs());
        FileModes modes = FileModes.of(chmod(dir, "2770"));
        modes.shareGuard(guard, attributes(guard));
        assertThat(mode(guard)).isEqualTo("rw-rw----");
    }

    @Test
    void anExposedGuardIsNotMadeToLookShared() throws Exception {
        Path dir = directory("2770");
        FileModes modes = FileModes.of(dir);
        Path guard = Files.createFile(dir.resolve("build.guard"));
        assertThat(exposedAs(modes, guard, "rw-rw-rw-")).isTrue();
        modes.shareGuard(guard, attributes(guard));
        assertThat(mode(guard)).as("exposed, and so said to be, not hidden").isEqualTo("rw-rw-rw-");
    }

    /** As root: a file of another group is open to that group's members, whom the directory does not let in. */
    @Test
    void aGuardOfAnotherGroupWithGroupAccessIsExposed() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "only root gives a file a group it is not in");
        Path dir = directory("2770");
        FileModes modes = FileModes.of(dir);
        Path guard = Files.createFile(dir.resolve("build.guard"));
        GroupPrincipal other = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByGroupName(
                groupOtherThan(attributes(dir).group()));
        Files.getFileAttributeView(guard, PosixFileAttributeView.class).setGroup(other);
        assertThat(exposedAs(modes, guard, "rw-rw----")).as("its group's members may hold it open").isTrue();
        assertThat(exposedAs(modes, guard, "rw-------")).as("no group access: nobody else opens it").isFalse();
        modes.shareGuard(guard, attributes(guard));
        assertThat(attributes(guard).group()).as("given the directory's group").isEqualTo(attributes(dir).group());
        assertThat(mode(guard)).isEqualTo("rw-rw----");
    }

    private static String groupOtherThan(GroupPrincipal group) throws IOException {
        for (String line : Files.readAllLines(Path.of("/etc/group"))) {
            String name = line.split(":", 2)[0];
            if (!name.isEmpty() && !name.equals(group.getName())) {
                return name;
            }
        }
        throw new IllegalStateException("no other group in /etc/group");
    }
}
