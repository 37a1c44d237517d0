package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exit watch on real processes: an exit, a zombie, a zombie leader whose threads run on, a
 * cancel, 10,000 watches under a limit of 1,024 descriptors, {@code pidfd_open} refused, a watch
 * made inside a PID namespace.
 */
@EnabledOnOs(OS.LINUX)
class ExitWatchIT {

    @TempDir
    Path dir;
    final Children children = new Children();
    final List<Process> workers = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : workers) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        children.killAll();
    }

    private static Verdict within(CompletableFuture<Verdict> f, int seconds) throws Exception {
        return f.get(seconds, TimeUnit.SECONDS);
    }

    @Test
    void withNothingWatchedTheThreadWaitsInJavaNotInANativeCall() throws Exception {
        Process p = children.start("sleep", "60");
        CompletableFuture<Verdict> end = ProcLive.onExit(ProcLive.identify(p.pid()).orElseThrow());
        Thread watcher = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("proclive-exit-watch")).findFirst().orElseThrow();
        p.destroyForcibly();
        assertThat(within(end, 10).liveness()).isEqualTo(Liveness.DEAD);
        // HotSpot's exit waits ~300 ms for a thread inside a native call (RUNNABLE to Java); a parked one it does not
        Thread.State state = Eventually.until("the watcher parked", Duration.ofSeconds(5), watcher::getState,
                s -> s == Thread.State.WAITING);
        assertThat(state).as("idle: parked, not in epoll_wait").isEqualTo(Thread.State.WAITING);
    }

    @Test
    void aWatchPendingAtExitEndsItsThreadInTheShutdownHooks() throws Exception {
        Process p = children.start("sleep", "60");
        Process jvm = new ProcessBuilder(JavaMain.command(List.of(), ExitWatchWorker.class, "exit-pending",
                Long.toString(p.pid()))).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.add(jvm);
        String line = new BufferedReader(new InputStreamReader(jvm.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertThat(jvm.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(line).as("woken out of its wait and ended, so the exit does not wait for it").isEqualTo("pending ended");
        assertThat(p.isAlive()).isTrue();
    }

    @Test
    void anExitCompletesTheWatchAndLeavesNoDescriptor() throws Exception {
        Process p = children.start("sleep", "60");
        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        long before = ExitWatchWorker.pidfds();
        CompletableFuture<Verdict> end = ProcLive.onExit(id);
        assertThat(end).isNotDone();
        assertThat(ExitWatchWorker.pidfds()).as("a pidfd pins it").isEqualTo(before + 1);
        long killed = System.nanoTime();
        p.destroyForcibly();
        Verdict v = within(end, 10);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        assertThat(v.liveness()).isEqualTo(Liveness.DEAD);
        assertThat(v.reason()).isIn(Reason.EXITED, Reason.ZOMBIE);
        assertThat(millis).as("not a poll of a second").isLessThan(900);
        assertThat(ExitWatchWorker.pidfds()).as("a completed watch holds no descriptor").isEqualTo(before);
        assertThat(ProcLive.onExit(id)).as("already dead: at once").isCompletedWithValueMatching(
                x -> x.liveness() == Liveness.DEAD);
    }

    /**
     * A process that is not this JVM's child, started by a shell that reaps it ({@code wait}) and
     * runs {@code script}: its identity and the shell.
     */
    private Identity grandchild(String script) throws Exception {
        Process shell = new ProcessBuilder("sh", "-c", "sh -c '" + script + "' & echo $!; wait").start();
        workers.add(shell);
        long pid = Long.parseLong(new BufferedReader(new InputStreamReader(shell.getInputStream(),
                StandardCharsets.UTF_8)).readLine().strip());
        assertThat(ProcessHandle.current().children().noneMatch(c -> c.pid() == pid)).as("not a child of this JVM").isTrue();
        return ProcLive.identify(pid).orElseThrow();
    }

    @Test
    void howAProcessThatIsNotAChildEndedIsToldKilledExitedOrCrashed() throws Exception {
        assumeTrue(Kernel.tellsExitStatus(), Kernel.NO_EXIT_STATUS);
        Path go = dir.resolve("go");
        String whenTold = "while [ ! -e " + go + " ]; do sleep 0.05; done; "; // each ends once every watch is made
        Identity killed = grandchild("exec sleep 60");
        Identity exited = grandchild(whenTold + "exit 3");
        Identity crashed = grandchild(whenTold + "kill -SEGV $$");
        CompletableFuture<Verdict> k = ProcLive.onExit(killed);
        CompletableFuture<Verdict> e = ProcLive.onExit(exited);
        CompletableFuture<Verdict> c = ProcLive.onExit(crashed);
        Files.writeString(go, "");
        Runtime.getRuntime().exec(new String[] {"kill", "-KILL", Long.toString(killed.pid())}).waitFor();
        Verdict byKill = within(k, 30);
        Verdict byExit = within(e, 30);
        Verdict byCrash = within(c, 30);
        assertThat(byKill.liveness()).isEqualTo(Liveness.DEAD);
        assertThat(byKill.exit()).as("%s", byKill).hasValueSatisfying(x -> {
            assertThat(x.signal()).hasValue(9);
            assertThat(x.signalName()).hasValue("SIGKILL");
            assertThat(x.code()).isEmpty();
        });
        assertThat(byExit.exit()).as("%s", byExit).hasValueSatisfying(x -> {
            assertThat(x.code()).hasValue(3);
            assertThat(x.signal()).isEmpty();
        });
        assertThat(byCrash.exit()).as("%s", byCrash).hasValueSatisfying(x -> assertThat(x.signal()).hasValue(11));
        assertThat(byKill.toString()).contains("killed by SIGKILL");
    }

    @Test
    void aZombieNobodyReapsEndsTheWatchWithoutAStatus() throws Exception {
        long zombie = children.zombieToBe("0.5");
        Verdict v = within(ProcLive.onExit(ProcLive.identify(zombie).orElseThrow()), 30);
        assertThat(v.liveness()).isEqualTo(Liveness.DEAD);
        assertThat(v.exit()).as("its parent never reaped it: no status to tell").isEmpty();
    }

    @Test
    void aZombieIsAnEnd() throws Exception {
        long child = children.zombieToBe("0.3");
        Identity id = ProcLive.identify(child).orElseThrow();
        Verdict v = within(ProcLive.onExit(id), 10);
        assertThat(v.reason()).isEqualTo(Reason.ZOMBIE);
        assertThat(Files.readString(Path.of("/proc/" + child + "/stat"))).contains(") Z ");
    }

    @Test
    void aZombieLeaderWhoseThreadsRunIsNotAnEnd() throws Exception {
        Path program = CPrograms.compile(dir, "leader_exits_on_input");
        Process p = children.start(program.toString());
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("ready");
        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        CompletableFuture<Verdict> end = ProcLive.onExit(id);
        OutputStream in = p.getOutputStream();
        in.write("go\n".getBytes(StandardCharsets.US_ASCII));
        in.flush();
        Eventually.until("the leader shows Z", Duration.ofSeconds(10),
                () -> Files.readString(Path.of("/proc/" + p.pid() + "/stat")).contains(") Z "));
        assertThat(Files.readString(Path.of("/proc/" + p.pid() + "/stat"))).as("the leader shows Z").contains(") Z ");
        Thread.sleep(300); // time itself is tested: a while passes with the leader a zombie, and no end is said
        assertThat(end).as("its other thread still runs").isNotDone();
        assertThat(ProcLive.check(id)).isEqualTo(Liveness.ALIVE);
        p.destroyForcibly();
        assertThat(within(end, 10).liveness()).isEqualTo(Liveness.DEAD);
    }

    @Test
    void cancelClosesTheDescriptor() throws Exception {
        Identity id = ProcLive.identify(children.start("sleep", "60").pid()).orElseThrow();
        long before = ExitWatchWorker.pidfds();
        CompletableFuture<Verdict> end = ProcLive.onExit(id);
        assertThat(ExitWatchWorker.pidfds()).isEqualTo(before + 1);
        assertThat(end.cancel(false)).isTrue();
        Eventually.until("the pidfd closed", Duration.ofSeconds(10), () -> ExitWatchWorker.pidfds() == before);
        assertThat(ExitWatchWorker.pidfds()).isEqualTo(before);
    }

    @Test
    void anIdentityItCannotProveAliveCompletesAtOnce() {
        Identity elsewhere = new Identity(ProcessHandle.current().pid(), "1", "", "another-host", "", "");
        assertThat(ProcLive.onExit(elsewhere)).isCompletedWithValueMatching(v -> v.reason() == Reason.OTHER_HOST);
        Identity bare = new Identity(ProcessHandle.current().pid(), "", "", "", "", "");
        assertThat(ProcLive.onExit(bare)).isCompletedWithValueMatching(v -> v.reason() == Reason.NO_FINGERPRINT);
    }

    private Process worker(List<String> prefix, String... args) throws Exception {
        Process p = new ProcessBuilder(JavaMain.command(prefix, ExitWatchWorker.class, args)).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        workers.add(p);
        return p;
    }

    private List<String> sleepers(int n) throws Exception {
        List<String> pids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            pids.add(Long.toString(children.start("sleep", "120").pid()));
        }
        return pids;
    }

    @Test
    void tenThousandWatchesUnderALimitOf1024DescriptorsAreAllKept() throws Exception {
        List<String> pids = sleepers(50);
        List<String> args = new ArrayList<>(List.of("many", "10000"));
        args.addAll(pids);
        Process w = worker(List.of("sh", "-c", "ulimit -n 1024 && exec \"$@\"", "sh"), args.toArray(new String[0]));
        BufferedReader out = new BufferedReader(new InputStreamReader(w.getInputStream(), StandardCharsets.UTF_8));
        String watching = out.readLine();
        assertThat(watching).startsWith("watching ");
        long pidfds = Long.parseLong(watching.substring("watching ".length()));
        assertThat(pidfds).as("half the limit at most, the rest polled").isBetween(100L, 512L);
        children.killAll();
        String done = out.readLine();
        assertThat(done).as("every watch completed").startsWith("done 10000 ");
        assertThat(out.readLine()).isEqualTo("left 0");
        assertThat(w.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(w.exitValue()).isZero();
    }

    @Test
    void whenPidfdOpenIsRefusedEveryWatchPollsAndStillEnds() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/strace")), "strace injects ENOSYS into pidfd_open; .ci/run installs it");
        for (String errno : List.of("ENOSYS", "EPERM")) {
            List<String> args = new ArrayList<>(List.of("many", "20"));
            args.addAll(sleepers(3));
            Process w = worker(List.of("strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pidfd_open",
                    "-e", "inject=pidfd_open:error=" + errno), args.toArray(new String[0]));
            BufferedReader out = new BufferedReader(new InputStreamReader(w.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).as(errno).isEqualTo("watching 0");
            children.killAll();
            assertThat(out.readLine()).as(errno).startsWith("done 20 ");
            assertThat(w.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(w.exitValue()).isZero();
        }
    }

    @Test
    void aWatchMadeInsideAPidNamespaceEnds() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to make a PID namespace; runs in CI as root");
        Process w = worker(List.of("unshare", "--pid", "--fork", "--mount-proc"), "own");
        BufferedReader out = new BufferedReader(new InputStreamReader(w.getInputStream(), StandardCharsets.UTF_8));
        assertThat(out.readLine()).isEqualTo("watching 1");
        assertThat(out.readLine()).isIn("EXITED", "ZOMBIE");
        assertThat(w.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(w.exitValue()).isZero();
    }
}
