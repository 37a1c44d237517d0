package dev.proclive.linux;

import dev.proclive.Eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.CPrograms;
import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/** Real processes on the real kernel: what {@code ProcLive} says must be what the kernel shows. */
@EnabledOnOs(OS.LINUX)
class LinuxLiveTest {

    private final Children children = new Children();

    @TempDir
    Path dir;

    @AfterEach
    void killChildren() throws InterruptedException {
        children.killAll();
    }

    private Process start(String... command) throws IOException {
        return children.start(command);
    }

    private static String procStat(long pid) throws IOException {
        return Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.ISO_8859_1);
    }

    @Test
    void aLiveProcesssStartWithALeadingZeroIsUnknownNeverDead() throws Exception {
        Process sleeper = start("sleep", "60");
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        Identity padded = new Identity(id.pid(), "0" + id.start(), id.boot(), id.host(), id.name(), id.pidns(),
                id.machine());
        assertThat(ProcLive.explain(padded).reason()).isEqualTo(Reason.NO_FINGERPRINT);
        assertThat(ProcLive.check(padded)).isEqualTo(Liveness.UNKNOWN);
        assertThat(ProcLive.ancestry().whyUnknown(padded)).contains("no_fingerprint");
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.ALIVE);
    }

    @Test
    void aLiveProcesssBootIdSpelledOtherwiseIsUnknownNeverRebooted() throws Exception {
        Process sleeper = start("sleep", "60");
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        org.junit.jupiter.api.Assumptions.assumeFalse(id.boot().isEmpty(), "this kernel gives a boot id");
        for (String boot : List.of(id.boot().toUpperCase(java.util.Locale.ROOT), " " + id.boot(), id.boot() + " ",
                id.boot().replace("-", ""))) {
            Identity respelled = new Identity(id.pid(), id.start(), boot, id.host(), id.name(), id.pidns(), id.machine());
            assertThat(ProcLive.explain(respelled).reason()).as(boot).isEqualTo(Reason.NO_FINGERPRINT);
            assertThat(ProcLive.explain(respelled).detail()).as(boot).contains("not a boot id");
            assertThat(ProcLive.check(respelled)).as(boot).isEqualTo(Liveness.UNKNOWN);
            assertThat(ProcLive.ancestry().whyUnknown(respelled)).as(boot).contains("no_fingerprint");
        }
        Identity otherBoot = new Identity(id.pid(), id.start(), "00000000-0000-4000-8000-000000000000", id.host(),
                id.name(), id.pidns(), id.machine());
        assertThat(ProcLive.explain(otherBoot).reason()).as("a boot id as the kernel writes them").isEqualTo(Reason.REBOOTED);
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.ALIVE);
    }

    @Test
    void aSleeperIsAliveThenExited() throws Exception {
        Process sleeper = start("sleep", "60");
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        assertThat(id.name()).isEqualTo("sleep");
        assertThat(ProcLive.explain(id).reason()).isEqualTo(Reason.MATCHED);
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.ALIVE);

        sleeper.destroyForcibly();
        assertThat(sleeper.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Path.of("/proc/" + sleeper.pid())).doesNotExist();
        assertThat(ProcLive.explain(id).reason()).isEqualTo(Reason.EXITED);
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.DEAD);
    }

    @Test
    void theStartFingerprintIsField22AsTheKernelWritesIt() throws Exception {
        Process sleeper = start("sleep", "60");
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        String stat = procStat(sleeper.pid());
        String[] after = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        assertThat(id.start()).isEqualTo(after[19]);
        assertThat(id.host()).isEqualTo(Files.readString(Path.of("/proc/sys/kernel/hostname")).trim());
        assertThat(id.boot()).isEqualTo(Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim());
        assertThat("pid:[" + id.pidns() + "]").isEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString());
    }

    @Test
    void aRealZombieIsDead() throws Exception {
        // sh starts a short sleep, prints its pid, then becomes a sleep that never reaps it.
        long child = children.zombieToBe("1");
        Identity id = ProcLive.identify(child).orElseThrow();

        Verdict v = Children.await(id, x -> x.reason() != Reason.MATCHED);
        assertThat(procStat(child)).contains(") Z ");
        assertThat(v.reason()).isEqualTo(Reason.ZOMBIE);
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.DEAD);
        assertThat(ProcLive.identify(child)).as("a zombie is not recorded as an owner").isEmpty();
    }

    @Test
    void aZombieMainThreadWithALiveThreadIsAlive() throws Exception {
        Path program = CPrograms.compile(dir, "leader_exits");
        Process p = start(program.toString());
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("ready");
        }
        Eventually.until("the main thread shows Z", java.time.Duration.ofSeconds(10), () -> procStat(p.pid()).contains(") Z "));
        assertThat(procStat(p.pid())).as("the main thread shows Z").contains(") Z ");
        assertThat(Files.readString(Path.of("/proc/" + p.pid() + "/status"))).containsPattern("Threads:\\s+2");

        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        assertThat(ProcLive.explain(id).reason()).isEqualTo(Reason.MATCHED);
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.ALIVE);

        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
        assertThat(ProcLive.explain(id).reason()).isEqualTo(Reason.EXITED);
    }

    @Test
    void aThreadIdIsNotAProcess() throws Exception {
        long pid = ProcessHandle.current().pid();
        long tid;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tid = tasks.map(t -> Long.parseLong(t.getFileName().toString())).filter(t -> t != pid)
                    .findFirst().orElseThrow();
        }
        assertThat(Path.of("/proc/" + tid + "/stat")).as("a thread's stat opens").exists();
        assertThat(ProcLive.identify(tid)).isEmpty();
        assertThat(ProcLive.identify(pid)).isPresent();
    }

    @Test
    void aForeignFingerprintIsAReusedPid() {
        Identity self = ProcLive.current().orElseThrow();
        Identity older = new Identity(self.pid(), Long.toString(Long.parseLong(self.start()) - 1),
                self.boot(), self.host(), self.name(), self.pidns());
        assertThat(ProcLive.explain(older).reason()).isEqualTo(Reason.PID_REUSED);
        assertThat(ProcLive.check(older)).isEqualTo(Liveness.DEAD);
        assertThat(ProcLive.check(self)).isEqualTo(Liveness.ALIVE);
    }

    @Test
    void currentIsThisJvm() {
        Identity self = ProcLive.current().orElseThrow();
        assertThat(self.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(ProcLive.identify(self.pid())).contains(self);
    }

    @Test
    void anotherBootIsAReboot() {
        Identity self = ProcLive.current().orElseThrow();
        Identity before = new Identity(self.pid(), self.start(), "00000000-0000-0000-0000-000000000000",
                self.host(), self.name(), self.pidns());
        assertThat(ProcLive.explain(before).reason()).isEqualTo(Reason.REBOOTED);
    }

    @Test
    void namesWithParenthesesSpacesAndNewlinesAreReadWhole() throws Exception {
        String name = "x) (y\nz w";
        Path program = dir.resolve(name);
        Files.copy(Path.of(which("sleep")), program, StandardCopyOption.COPY_ATTRIBUTES);
        Process p = start(program.toString(), "60");
        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        assertThat(id.name()).isEqualTo(name);
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.ALIVE);
    }

    @Test
    void longNamesAreTruncatedByTheKernelAndStillSkippable() throws Exception {
        Path program = dir.resolve("sleep-with-a-very-long-name");
        Files.copy(Path.of(which("sleep")), program, StandardCopyOption.COPY_ATTRIBUTES);
        Process p = start(program.toString(), "60");
        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        assertThat(id.name()).isEqualTo("sleep-with-a-ve");
        assertThat(LinuxProcessIntrospector.system().nameMatches(id.name(), "sleep-with-a-very-long-name")).isTrue();
    }

    @Test
    void checkAllSaysWhatExplainSaysOneByOne() throws Exception {
        Process sleeper = start("sleep", "60");
        Identity alive = ProcLive.identify(sleeper.pid()).orElseThrow();
        Process gone = start("sleep", "60");
        Identity exited = ProcLive.identify(gone.pid()).orElseThrow();
        gone.destroyForcibly();
        gone.waitFor(10, TimeUnit.SECONDS);
        long child = children.zombieToBe("0.2");
        Identity zombie = ProcLive.identify(child).orElseThrow();
        assertThat(Children.await(zombie, v -> v.reason() == Reason.ZOMBIE).reason()).isEqualTo(Reason.ZOMBIE);
        Identity elsewhere = new Identity(alive.pid(), alive.start(), alive.boot(), "elsewhere", "sleep", alive.pidns());
        Identity reused = new Identity(alive.pid(), "1", alive.boot(), alive.host(), "sleep", alive.pidns());

        List<Identity> ids = List.of(alive, exited, zombie, elsewhere, reused, alive);
        List<Verdict> batch = ProcLive.checkAll(ids);
        List<Verdict> oneByOne = ids.stream().map(ProcLive::explain).collect(Collectors.toList());
        assertThat(batch).isEqualTo(oneByOne);
        assertThat(batch).extracting(Verdict::reason).containsExactly(Reason.MATCHED, Reason.EXITED,
                Reason.ZOMBIE, Reason.OTHER_HOST, Reason.PID_REUSED, Reason.MATCHED);
    }

    @Test
    void manyThreadsCheckingAtOnceAllGetTheRightAnswer() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Process sleeper = start("sleep", "60");
        Identity other = ProcLive.identify(sleeper.pid()).orElseThrow();
        Process gone = start("sleep", "60");
        Identity exited = ProcLive.identify(gone.pid()).orElseThrow();
        gone.destroyForcibly();
        gone.waitFor(10, TimeUnit.SECONDS);

        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<java.util.concurrent.Future<Boolean>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                results.add(pool.submit(() -> {
                    for (int i = 0; i < 300; i++) {
                        if (ProcLive.check(self) != Liveness.ALIVE
                                || ProcLive.explain(other).reason() != Reason.MATCHED
                                || !ProcLive.identify(other.pid()).equals(java.util.Optional.of(other))
                                || ProcLive.check(exited) != Liveness.DEAD) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (java.util.concurrent.Future<Boolean> r : results) {
                assertThat(r.get(60, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static String which(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, command);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        throw new AssertionError(command + " not on PATH");
    }
}
