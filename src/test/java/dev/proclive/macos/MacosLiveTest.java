package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Real processes on a real Mac (the GitHub Actions macOS job); compiled everywhere. */
@EnabledOnOs(OS.MAC)
class MacosLiveTest {

    private final Children children = new Children();

    @AfterEach
    void killChildren() throws InterruptedException {
        children.killAll();
    }

    private Process start(String... command) throws IOException {
        return children.start(command);
    }

    @Test
    void theMacIntrospectorIsInUse() {
        assertThat(ProcLive.current()).as("this JVM, read through sysctl").isPresent();
    }

    @Test
    void theMachineIsTheHardwareUuidIoregPrints() throws Exception {
        Process ioreg = new ProcessBuilder("ioreg", "-rd1", "-c", "IOPlatformExpertDevice").start();
        String out = new String(ioreg.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(ioreg.waitFor(30, TimeUnit.SECONDS)).isTrue();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"IOPlatformUUID\" = \"([^\"]+)\"").matcher(out);
        assertThat(m.find()).as(out).isTrue();
        Identity self = ProcLive.current().orElseThrow();
        assertThat(self.machine()).isEqualTo(m.group(1));
        Identity elsewhere = new Identity(self.pid(), self.start(), "", self.host(), self.name(), "",
                "00000000-0000-0000-0000-000000000001");
        assertThat(ProcLive.explain(elsewhere).reason()).isEqualTo(Reason.OTHER_HOST);
    }

    @Test
    void aSleeperIsAliveThenExited() throws Exception {
        Process sleeper = start("sleep", "60");
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        assertThat(id.name()).isEqualTo("sleep");
        assertThat(id.boot()).isEmpty();
        assertThat(id.host()).isNotEmpty();
        assertThat(ProcLive.explain(id).reason()).isEqualTo(Reason.MATCHED);
        sleeper.destroyForcibly();
        sleeper.waitFor(10, TimeUnit.SECONDS);
        assertThat(ProcLive.explain(id).reason()).isEqualTo(Reason.EXITED);
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.DEAD);
    }

    @Test
    void aRealZombieIsDead() throws Exception {
        long child = children.zombieToBe("1");
        Identity id = ProcLive.identify(child).orElseThrow();
        Verdict v = Children.await(id, x -> x.reason() != Reason.MATCHED);
        assertThat(v.reason()).isEqualTo(Reason.ZOMBIE);
    }

    @Test
    void aForeignFingerprintIsAReusedPid() {
        Identity self = ProcLive.current().orElseThrow();
        Identity other = new Identity(self.pid(), "1.000000", "", self.host(), self.name(), "");
        assertThat(ProcLive.explain(other).reason()).isEqualTo(Reason.PID_REUSED);
        assertThat(ProcLive.check(self)).isEqualTo(Liveness.ALIVE);
    }

    @Test
    void theStartAgreesWithPsToTheSecond() throws Exception {
        Process sleeper = start("sleep", "60");
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        Process ps = start("ps", "-o", "lstart=", "-p", Long.toString(sleeper.pid()));
        String lstart = new String(ps.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        LocalDateTime psStart = LocalDateTime.parse(lstart.replaceAll("\\s+", " "),
                DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss yyyy", Locale.US));
        long seconds = Long.parseLong(id.start().substring(0, id.start().indexOf('.')));
        assertThat(seconds).isEqualTo(psStart.atZone(ZoneId.systemDefault()).toEpochSecond());
        assertThat(id.start()).matches("\\d+\\.\\d{6}");
    }

    @Test
    void theOwnerThroughShIsThisJvm() throws Exception {
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        // Only the child's stdout is compared: on JDK 24+ JNA's native-access warning goes to stderr
        // unless native access is enabled, and this test's processes merge the two.
        Process p = start("sh", "-c", "'" + javaBin + "' --enable-native-access=ALL-UNNAMED -cp '" + cp + "' '"
                + OwnerMain.class.getName() + "' 2>/dev/null; true");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).isEqualTo(Long.toString(ProcessHandle.current().pid()));
    }

    @Test
    void aShebangHookScriptIsNotItsOwnOwner() throws Exception {
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("java.class.path");
        java.nio.file.Path hook = java.nio.file.Files.createTempFile("hook", ".sh");
        try {
            java.nio.file.Files.writeString(hook, "#!/bin/sh\n'" + javaBin + "' --enable-native-access=ALL-UNNAMED -cp '"
                    + cp + "' '" + OwnerMain.class.getName() + "' 2>/dev/null\nstatus=$?\nexit $status\n");
            hook.toFile().setExecutable(true);
            Process p = start(hook.toString());
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(out).isEqualTo(Long.toString(ProcessHandle.current().pid()));
        } finally {
            java.nio.file.Files.deleteIfExists(hook);
        }
    }

    /** Prints the resolved owner's pid, run in a child JVM under sh. */
    public static final class OwnerMain {
        public static void main(String[] args) {
            System.out.println(ProcLive.resolveOwner().map(Identity::pid).orElse(-1L));
        }
    }

    @Test
    void anExitIsHeardThroughTheKqueue() throws Exception {
        Process p = start("sleep", "60");
        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        java.util.concurrent.CompletableFuture<Verdict> end = ProcLive.onExit(id);
        assertThat(end).isNotDone();
        long killed = System.nanoTime();
        p.destroyForcibly();
        Verdict v = end.get(10, TimeUnit.SECONDS);
        assertThat(v.liveness()).isEqualTo(Liveness.DEAD);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed)).as("not a poll").isLessThan(900);
    }

    @Test
    void aZombieEndsAWatch() throws Exception {
        long child = children.zombieToBe("0.3");
        Identity id = ProcLive.identify(child).orElseThrow();
        assertThat(ProcLive.onExit(id).get(10, TimeUnit.SECONDS).reason()).isEqualTo(Reason.ZOMBIE);
    }
}
