package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** One pass over a fake {@code /proc} for a token's carriers: what makes it a proof, and what does not. */
@DisabledOnOs(OS.WINDOWS) // FakeProc makes symbolic links
class EnvironScanTest {

    static final String TOKEN = "0123456789abcdef0123456789abcdef";
    static final Predicate<String> IS_TOKEN = TOKEN::equals;

    @TempDir
    Path dir;
    FakeProc proc;

    @BeforeEach
    void tree() {
        proc = new FakeProc(dir);
    }

    @AfterEach
    void removeLinks() throws java.io.IOException {
        FakeProc.removeLinks(dir);
    }

    /** Process {@code pid} (started at tick 4180) running as {@code uid}, with {@code environ}'s entries. */
    private void process(long pid, long uid, String... environ) {
        proc.process(pid, "spaces.stat");
        proc.status(pid, "Name:\tp\nTgid:\t" + pid + "\nUid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid
                + "\nThreads:\t1\n");
        proc.file(pid + "/environ", String.join("\0", environ) + (environ.length == 0 ? "" : "\0"));
    }

    private EnvironmentScan scan(long uid, Optional<String> floor) {
        return proc.introspector(null).scanEnvironments("PROCLIVE_LEASE_TOKEN", IS_TOKEN, uid, floor);
    }

    @Test
    void aCarrierOfTheReserversUserIsFoundAndTheScanIsComplete() {
        process(70, 1000, "HOME=/home/me", "PROCLIVE_LEASE_TOKEN=" + TOKEN);
        process(71, 1000, "PROCLIVE_LEASE_TOKEN=" + "f".repeat(32));
        process(72, 1000, "XPROCLIVE_LEASE_TOKEN=" + TOKEN, "PROCLIVE_LEASE_TOKEN_=" + TOKEN);
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).as(scan.detail()).isTrue();
        assertThat(scan.carriers()).extracting(ProcessInfo::pid).containsExactly(70L);
    }

    @Test
    void aCarrierOfAnotherUserIsNeverACarrierItMakesTheScanIncomplete() {
        process(70, 1001, "PROCLIVE_LEASE_TOKEN=" + TOKEN);
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.carriers()).isEmpty();
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).isFalse();
        assertThat(scan.detail()).contains("pid 70", "uid 1001", "not uid 1000");
    }

    @Test
    void anExitingProcessWhoseEnvironmentReadsEmptyMakesThePassInconclusive() {
        process(70, 1000, "HOME=/");
        proc.process(71, "exiting.stat"); // PF_EXITING: its memory, and so its environment, is gone already
        proc.file("71/environ", "");
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).as("what it forked after the listing is listed next pass").isTrue();
        assertThat(scan.detail()).contains("pid 71");
    }

    @Test
    void aKernelThreadStartedSinceTheReservationHasNoEnvironmentAndLeavesTheScanComplete() throws Exception {
        process(70, 1000, "HOME=/");
        proc.process(5, "kernel-thread.stat"); // PF_KTHREAD; its environ reads ESRCH
        java.nio.file.Files.createDirectories(dir.resolve("5/environ")); // a read that fails, not EACCES
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).as(scan.detail()).isTrue();
        proc.process(6, "spaces.stat"); // the same failure for a user process proves nothing
        java.nio.file.Files.createDirectories(dir.resolve("6/environ"));
        EnvironmentScan user = scan(1000, Optional.empty());
        assertThat(user.complete()).isFalse();
        assertThat(user.detail()).contains("pid 6");
    }

    @Test
    void aLiveProcessWithAnEmptyEnvironmentSimplyLacksTheToken() {
        process(70, 1000);
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).as(scan.detail()).isTrue();
        assertThat(scan.carriers()).isEmpty();
    }

    @Test
    void exitingIsReadFromTheStateAndTheFlags() throws Exception {
        Path stat = dir.resolve("stat");
        java.nio.file.Files.writeString(stat, "9 (a) b) S 1 9 9 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 4180");
        assertThat(EnvironScan.exiting(stat)).isFalse();
        java.nio.file.Files.writeString(stat, "9 (a) b) S 1 9 9 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 4180");
        assertThat(EnvironScan.exiting(stat)).as("PF_EXITING").isTrue();
        java.nio.file.Files.writeString(stat, "9 (a) Z 1 9 9 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 4180");
        assertThat(EnvironScan.exiting(stat)).as("a zombie").isTrue();
        java.nio.file.Files.writeString(stat, "9 (a) S 1 9");
        assertThat(EnvironScan.exiting(stat)).as("cut short: nothing proves it lives").isTrue();
        assertThat(EnvironScan.exiting(dir.resolve("none"))).as("gone").isTrue();
    }

    @Test
    void aListedProcessGoneBeforeItsStatWasReadMakesThePassInconclusive() {
        process(70, 1000, "HOME=/");
        proc.file("71/cmdline", ""); // listed, but its stat is gone: it exited after the listing
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).as("another pass lists what it forked").isTrue();
        assertThat(scan.detail()).contains("71");
    }

    @Test
    void aListedProcessGoneBeforeItsEnvironmentWasReadMakesThePassInconclusive() {
        process(70, 1000, "HOME=/");
        proc.delete("70/environ");
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).isTrue();
    }

    @Test
    void processesStartedBeforeTheFloorAreSkippedUnread() {
        process(70, 1000, "PROCLIVE_LEASE_TOKEN=" + TOKEN);
        proc.delete("70/environ"); // never read: started at 4180, before the floor
        assertThat(scan(1000, Optional.of("5000")).complete()).isTrue();
        assertThat(scan(1000, Optional.of("4180")).passAgain()).as("at the floor it is read").isTrue();
    }

    @Test
    void aZombieMakesOnePassInconclusiveAndTheNextPassProvesWhatItForkedIsListed() {
        process(70, 1000, "HOME=/");
        proc.process(80, "zombie.stat");
        List<String> opened = new ArrayList<>();
        EnvironmentScan scan = proc.introspector(null, opened::add)
                .scanEnvironments("PROCLIVE_LEASE_TOKEN", IS_TOKEN, 1000, Optional.empty());
        assertThat(scan.complete()).as(scan.detail()).isTrue();
        assertThat(opened.stream().filter(p -> p.endsWith("/80/stat"))).as("read in two passes").hasSize(2);
    }

    @Test
    void processesThatKeepEndingMakeTheScanIncompleteAfterItsPasses() {
        process(70, 1000, "HOME=/");
        proc.delete("70/environ"); // it ends under every pass
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).isTrue();
        assertThat(scan.detail()).contains("in each of " + dev.proclive.spi.internal.EnvironmentScan.PASSES + " passes");
    }

    @Test
    void underAPartialScanTheUsersProcessesEndingUnderEveryPassStillPassItAgain() {
        process(70, 1001, "PROCLIVE_LEASE_TOKEN=" + TOKEN); // another user's: partial for good
        process(71, 1000, "HOME=/");
        proc.delete("71/environ"); // the reserver's user's, ending under every pass: a re-forking chain
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).as("what it forked may carry the token: %s", scan.detail()).isTrue();
        assertThat(scan.detail()).contains("uid 1001", "pid 71", "in each of " + EnvironmentScan.PASSES + " passes");
    }

    @Test
    void underAPartialScanOtherUsersProcessesEndingDoNotPassItAgain() {
        process(70, 1001, "PROCLIVE_LEASE_TOKEN=" + TOKEN);
        process(71, 1002, "HOME=/");
        proc.delete("71/environ"); // another user's process ends: it cannot have forked the reserver's carrier
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).as(scan.detail()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "1.5", "", "-5", "9999999999999999999"})
    void aFloorThatIsNoTickCountSkipsNothingItMakesTheScanIncomplete(String floor) {
        process(70, 1000, "PROCLIVE_LEASE_TOKEN=" + TOKEN);
        EnvironmentScan scan = scan(1000, Optional.of(floor));
        assertThat(scan.complete()).isFalse();
        assertThat(scan.carriers()).isEmpty();
    }

    @Test
    void oneProcessIsReadForAClaim() {
        process(70, 1000, "PROCLIVE_LEASE_TOKEN=" + TOKEN);
        LinuxProcessIntrospector linux = proc.introspector(null);
        assertThat(linux.readEnvironment(70, "PROCLIVE_LEASE_TOKEN", IS_TOKEN).carriers()).extracting(ProcessInfo::pid)
                .containsExactly(70L);
        EnvironmentScan other = linux.readEnvironment(70, "PROCLIVE_LEASE_TOKEN", "f".repeat(32)::equals);
        assertThat(other.complete()).isTrue();
        assertThat(other.carriers()).isEmpty();
        proc.delete("70/environ");
        assertThat(linux.readEnvironment(70, "PROCLIVE_LEASE_TOKEN", IS_TOKEN).complete()).isFalse();
        assertThat(linux.readEnvironment(99, "PROCLIVE_LEASE_TOKEN", IS_TOKEN).complete()).isFalse();
    }

    /**
     * One process read alone (a hand-off, a claim): an environment that reads empty is what a process
     * between the two halves of an exec shows (its new image's environment is not set yet, and the
     * JDK's {@code start()} has already returned), so it proves nothing, as the scan proves nothing of
     * an exiting one; only a read that shows the environment tells that the token is not in it.
     */
    @Test
    void oneProcessWhoseEnvironmentReadsEmptyIsNotSaidToLackTheToken() {
        process(70, 1000);
        EnvironmentScan empty = proc.introspector(null).readEnvironment(70, "PROCLIVE_LEASE_TOKEN", IS_TOKEN);
        assertThat(empty.complete()).as("a proof that it never carried it: %s", empty).isFalse();
        assertThat(empty.detail()).contains("pid 70", "reads empty");
        process(71, 1000, "HOME=/");
        EnvironmentScan lacks = proc.introspector(null).readEnvironment(71, "PROCLIVE_LEASE_TOKEN", IS_TOKEN);
        assertThat(lacks.complete()).as(lacks.detail()).isTrue();
        assertThat(lacks.carriers()).isEmpty();
    }

    @Test
    void theUserIsTheEffectiveUidOfStatus() {
        process(70, 1000);
        proc.status(70, "Tgid:\t70\nUid:\t1000\t0\t0\t0\n");
        assertThat(proc.introspector(null).userId(70)).hasValue(0);
        assertThat(proc.introspector(null).userId(99)).isEmpty();
    }

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    /**
     * Fake process 71, exiting, whose {@code environ} is a real zombie's: opening it fails with ESRCH
     * (its memory is released), as an exiting process's does between the listing and the read.
     */
    private void releasedAsItExits() throws Exception {
        assertThat(Path.of("/proc/self/environ")).as("a Linux /proc").exists();
        long zombie = children.zombieToBe("0.3"); // not 0: a child that ends before its shell execs is reaped by it
        dev.proclive.Eventually.until("pid " + zombie + " is a zombie", java.time.Duration.ofSeconds(10),
                () -> java.nio.file.Files.readString(Path.of("/proc/" + zombie + "/stat")).contains(") Z "));
        process(70, 1000, "HOME=/");
        proc.process(71, "exiting.stat");
        proc.link("71/environ", "/proc/" + zombie + "/environ");
    }

    /** Whether opening fake process 71's {@code environ} (a real zombie's) is refused here, not answered ESRCH. */
    private boolean refusedHere() {
        try {
            java.nio.file.Files.readAllBytes(dir.resolve("71/environ"));
            return false;
        } catch (java.nio.file.AccessDeniedException e) {
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(OS.LINUX)
    void anExitingProcessWhoseMemoryIsReleasedMakesThePassInconclusive() throws Exception {
        releasedAsItExits();
        EnvironmentScan scan = scan(1000, Optional.empty());
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).as("ended, not unreadable: %s", scan.detail()).isTrue();
    }

    /**
     * The same under a German locale, where the JDK says ESRCH as "Kein passender Prozess gefunden":
     * the failure is told apart by its kind and the process's stat, never by the message's words.
     */
    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(OS.LINUX)
    void anExitingProcessWhoseMemoryIsReleasedMakesThePassInconclusiveInAGermanLocale() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isRegularFile(Path.of("/usr/share/i18n/locales/de_DE"))
                        && java.nio.file.Files.isRegularFile(Path.of("/usr/share/locale/de/LC_MESSAGES/libc.mo")),
                "needs the locales and libc-l10n packages to build de_DE.UTF-8 and translate strerror; .ci/run installs them");
        releasedAsItExits();
        org.junit.jupiter.api.Assumptions.assumeFalse(refusedHere(), "the kernel refuses an exiting process's memory to"
                + " a user who may not trace it (EACCES, whose words are not what is tried here): ESRCH is read as root");
        Path locales = java.nio.file.Files.createDirectories(dir.resolve("locales"));
        Process localedef = new ProcessBuilder("localedef", "-i", "de_DE", "-f", "UTF-8",
                locales.resolve("de_DE.UTF-8").toString()).redirectErrorStream(true).start();
        localedef.getInputStream().readAllBytes();
        assertThat(localedef.waitFor()).isIn(0, 1); // 1: built, with warnings
        ProcessBuilder child = new ProcessBuilder(dev.proclive.JavaMain.command(List.of(), InALocale.class, dir.toString()));
        child.environment().put("LOCPATH", locales.toString());
        child.environment().put("LC_ALL", "de_DE.UTF-8");
        Process p = child.redirectErrorStream(true).start();
        String said = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(said).isZero();
        assertThat(said).as("strerror is translated").contains("Kein passender Prozess");
        assertThat(said).contains("complete=false", "passAgain=true");
    }

    /** Scans the fake {@code /proc} at {@code args[0]} for the token; prints how ESRCH reads here and what the scan said. */
    static final class InALocale {
        public static void main(String[] args) throws Exception {
            Path root = Path.of(args[0]);
            try (java.io.InputStream in = java.nio.file.Files.newInputStream(root.resolve("71/environ"))) {
                in.read();
            } catch (java.io.IOException e) {
                System.out.println(e.getMessage());
            }
            EnvironmentScan scan = new FakeProc(root).introspector(null).scanEnvironments("PROCLIVE_LEASE_TOKEN", IS_TOKEN,
                    1000, Optional.empty());
            System.out.println("complete=" + scan.complete() + " passAgain=" + scan.passAgain() + " " + scan.detail());
        }
    }
}
