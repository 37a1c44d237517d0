package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Real processes on a real Mac (the GitHub Actions macOS job); compiled everywhere. */
@EnabledOnOs(OS.MAC)
class MacosLiveTest {

    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void killChildren() throws InterruptedException {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Process start(String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("LC_ALL", "C");
        Process p = pb.start();
        started.add(p);
        return p;
    }

    private static Verdict await(Identity id, Predicate<Verdict> done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Verdict v = ProcLive.explain(id);
        while (!done.test(v) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            v = ProcLive.explain(id);
        }
        return v;
    }

    @Test
    void theMacIntrospectorIsInUse() {
        assertThat(dev.proclive.LivenessChecker.system().introspector()).isInstanceOf(MacosProcessIntrospector.class);
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
        Process parent = start("sh", "-c", "sleep 1 & echo $!; exec sleep 60");
        long child = Long.parseLong(new BufferedReader(new InputStreamReader(parent.getInputStream(),
                StandardCharsets.UTF_8)).readLine().trim());
        Identity id = ProcLive.identify(child).orElseThrow();
        Verdict v = await(id, x -> x.reason() != Reason.MATCHED);
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
        Process p = start("sh", "-c", "'" + javaBin + "' -cp '" + cp + "' " + OwnerMain.class.getName() + "; true");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).isEqualTo(Long.toString(ProcessHandle.current().pid()));
    }

    /** Prints the resolved owner's pid, run in a child JVM under sh. */
    public static final class OwnerMain {
        public static void main(String[] args) {
            System.out.println(ProcLive.resolveOwner().map(Identity::pid).orElse(-1L));
        }
    }
}
