package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code proclive lease run}, {@code claim}, {@code --wait} and {@code --print fence} as a shell
 * runs them: statuses passed through, 126/127, SIGKILL and SIGTERM to the launcher, two runs at
 * once, eight processes mixing run, acquire and claim; and the reservation scan as {@code nobody},
 * also under {@code hidepid}.
 */
@EnabledOnOs(OS.LINUX)
class LeaseRunIT {

    static final String NOBODY = "65534";
    final ObjectMapper mapper = new ObjectMapper();
    final List<Process> started = new ArrayList<>();

    @TempDir
    Path tmp;

    @AfterEach
    void kill() throws InterruptedException {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private String dir() {
        return tmp.resolve("leases").toString();
    }

    private Cli.Result lease(String... args) {
        List<String> all = new ArrayList<>(List.of("lease"));
        all.addAll(List.of(args));
        return Cli.run(all.toArray(new String[0]));
    }

    private JsonNode record() throws Exception {
        return mapper.readTree(Files.readString(Path.of(dir(), "build.lease")));
    }

    private Process background(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("lease"));
        all.addAll(List.of(args));
        Process p = new ProcessBuilder(Cli.command(Cli.jar(), all.toArray(new String[0])))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        started.add(p);
        return p;
    }

    private static String line(Process p) throws Exception {
        return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }

    @Test
    void runExitsWithTheCommandsStatusAndEndsTheLeaseWithIt() throws Exception {
        Cli.Result r = lease("run", "build", "--dir", dir(), "--", "sh", "-c",
                "echo \"fence=$PROCLIVE_LEASE_FENCE name=$PROCLIVE_LEASE_NAME\"; exit 3");
        assertThat(r.exit()).as(r.err()).isEqualTo(3);
        assertThat(r.out()).isEqualTo("fence=1 name=build\n");
        JsonNode rec = record();
        assertThat(rec.path("state").asText()).isEqualTo("released");
        assertThat(rec.path("ended").path("how").asText()).isEqualTo("exited");
        assertThat(rec.path("ended").path("exitCode").asInt()).isEqualTo(3);
        assertThat(rec.path("ended").path("liveness").asText()).isEqualTo("dead");

        Cli.Result again = lease("run", "build", "--dir", dir(), "--", "true");
        assertThat(again.exit()).isZero();
        assertThat(record().path("fence").asLong()).isEqualTo(2);
    }

    @Test
    void aCommandNotFoundIs127AndOneThatCannotRunIs126() throws Exception {
        Cli.Result missing = lease("run", "build", "--dir", dir(), "--", tmp.resolve("no-such-command").toString());
        assertThat(missing.exit()).as(missing.err()).isEqualTo(127);
        assertThat(missing.err().strip()).doesNotContain("\n");
        assertThat(record().path("ended").path("how").asText()).isEqualTo("spawn_failed");
        Path notExecutable = Files.writeString(tmp.resolve("script"), "#!/bin/sh\nexit 0\n");
        Cli.Result cannot = lease("run", "build", "--dir", dir(), "--", notExecutable.toString());
        assertThat(cannot.exit()).as(cannot.err()).isEqualTo(126);
        assertThat(lease("run", "build", "--dir", dir()).exit()).as("no command").isEqualTo(64);
    }

    @Test
    void theCommandKeepsTheLeaseWhenRunIsKilled() throws Exception {
        Process run = background("run", "build", "--dir", dir(), "--", "sh", "-c", "echo $$; exec sleep 60");
        long command = Long.parseLong(line(run));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Files.readString(Path.of(dir(), "build.lease")).contains("\"state\":\"held\"") && System.nanoTime() < deadline) {
            Thread.sleep(10); // handed off to the command
        }
        run.destroyForcibly(); // SIGKILL to lease run
        assertThat(run.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ProcessHandle.of(command)).as("the command runs on").hasValueSatisfying(h -> assertThat(h.isAlive()).isTrue());
        JsonNode rec = record();
        assertThat(rec.path("state").asText()).isEqualTo("held");
        assertThat(rec.path("holder").path("pid").asLong()).isEqualTo(command);
        Cli.Result newcomer = lease("acquire", "build", "--dir", dir());
        assertThat(newcomer.exit()).as(newcomer.err()).isEqualTo(1);
        ProcessHandle.of(command).ifPresent(ProcessHandle::destroyForcibly);
    }

    @Test
    void sigtermToRunGoesToTheCommandAndItsStatusComesBack() throws Exception {
        Process run = background("run", "build", "--dir", dir(), "--", "sh", "-c",
                "trap 'echo got TERM; exit 42' TERM; echo ready; while :; do sleep 0.05; done");
        assertThat(line(run)).isEqualTo("ready");
        new ProcessBuilder("kill", "-TERM", Long.toString(run.pid())).start().waitFor();
        assertThat(run.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).isEqualTo(42);
        JsonNode rec = record();
        assertThat(rec.path("ended").path("how").asText()).isEqualTo("exited");
        assertThat(rec.path("ended").path("exitCode").asInt()).isEqualTo(42);
    }

    @Test
    void ofTwoRunsForOneNameOneRunsAndTheOtherExits1() throws Exception {
        Process first = background("run", "build", "--dir", dir(), "--", "sh", "-c", "echo started; exec sleep 60");
        assertThat(line(first)).isEqualTo("started");
        Cli.Result second = lease("run", "build", "--dir", dir(), "--", "sh", "-c", "echo second ran");
        assertThat(second.exit()).as(second.err()).isEqualTo(1);
        assertThat(second.out()).doesNotContain("second ran");
        assertThat(mapper.readTree(second.line()).path("verdict").path("liveness").asText()).isEqualTo("alive");
    }

    @Test
    void waitTakesTheLeaseWhenTheHolderExits() throws Exception {
        Process holder = new ProcessBuilder("sleep", "2").start();
        started.add(holder);
        assertThat(lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder.pid())).exit()).isZero();
        long before = System.nanoTime();
        Cli.Result waited = lease("acquire", "build", "--dir", dir(), "--wait", "30", "--print", "fence");
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - before);
        assertThat(waited.exit()).as(waited.err()).isZero();
        assertThat(waited.out()).isEqualTo("2\n");
        assertThat(seconds).as("when the holder exited, not at the deadline").isLessThan(20);
        Process other = new ProcessBuilder("sleep", "60").start();
        started.add(other);
        long start = System.nanoTime();
        Cli.Result deadline = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(other.pid()), "--wait", "1");
        assertThat(deadline.exit()).as("still held at the deadline").isEqualTo(1);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isGreaterThanOrEqualTo(1000);
    }

    @Test
    void printFenceGivesTheFenceAloneWhateverPreviousSays() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        started.add(gone);
        Process holder = new ProcessBuilder("sleep", "60").start();
        started.add(holder);
        assertThat(lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder.pid()), "--print", "fence").out())
                .isEqualTo("1\n");
        holder.destroyForcibly();
        holder.waitFor(10, TimeUnit.SECONDS);
        Cli.Result taken = lease("acquire", "build", "--dir", dir(), "--print", "fence");
        assertThat(taken.out()).isEqualTo("2\n");
        assertThat(lease("show", "build", "--dir", dir(), "--print", "fence").out()).isEqualTo("2\n");
        assertThat(lease("show", "build", "--dir", dir(), "--print", "json").exit()).isEqualTo(64);
    }

    @Test
    void claimTakesItsTokenFromTheEnvironment() throws Exception {
        Cli.Result noToken = lease("claim", "build", "--dir", dir());
        Files.createDirectories(Path.of(dir()));
        assertThat(noToken.exit()).isEqualTo(64);
        assertThat(Cli.exec(Cli.command(Cli.jar(), "lease", "claim", "build", "--dir", dir()), new byte[0],
                Map.of("PROCLIVE_LEASE_TOKEN", "NOT-HEX")).exit()).isEqualTo(64);
        // Inside run: the command claims its own lease (for itself): granted again, same fence.
        Cli.Result r = lease("run", "build", "--dir", dir(), "--", "sh", "-c",
                Cli.shellQuoted(Cli.command(Cli.jar(), "lease", "claim", "build", "--dir", dir(), "--holder", "$$",
                        "--print", "fence")).replace("'$$'", "$$"));
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("1\n");
    }

    @Test
    void eightProcessesMixingRunAcquireAndClaimNeverHoldItTwice() throws Exception {
        Path log = tmp.resolve("log");
        String cli = Cli.shellQuoted(Cli.command(Cli.jar()));
        String d = Cli.shellQuoted(List.of(dir()));
        String l = Cli.shellQuoted(List.of(log.toString()));
        String section = "echo \"enter $F $$\" >> " + l + "; sleep 0.05; echo \"exit $F $$\" >> " + l;
        String runner = "for i in 1 2 3; do " + cli + " lease run build --dir " + d + " --wait 60 -- sh -c "
                + Cli.shellQuoted(List.of("F=$(" + cli + " lease claim build --dir " + d + " --holder $$ --print fence) || exit 9; "
                        + section)) + " || echo \"run failed $?\" >> " + l + "; done";
        String acquirer = "sleep 600 & S=$!; for i in 1 2 3; do F=$(" + cli + " lease acquire build --dir " + d
                + " --holder $S --wait 60 --print fence) || { echo \"acquire failed\" >> " + l + "; continue; }; "
                + section + "; " + cli + " lease release build --dir " + d + " --fence $F; done; kill $S";
        List<Process> all = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Process p = new ProcessBuilder("sh", "-c", i % 2 == 0 ? runner : acquirer)
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            started.add(p);
            all.add(p);
        }
        for (Process p : all) {
            assertThat(p.waitFor(400, TimeUnit.SECONDS)).isTrue();
        }
        List<String> lines = Files.readAllLines(log);
        assertThat(lines).noneMatch(s -> s.contains("failed"));
        assertThat(lines).hasSize(8 * 3 * 2);
        long last = 0;
        for (int i = 0; i < lines.size(); i += 2) {
            String[] enter = lines.get(i).split(" ");
            String[] exit = lines.get(i + 1).split(" ");
            assertThat(enter[0]).as("line %d: %s", i, lines).isEqualTo("enter");
            assertThat(exit[0]).isEqualTo("exit");
            assertThat(exit[1]).as("the same grant enters and leaves").isEqualTo(enter[1]);
            long fence = Long.parseLong(enter[1]);
            assertThat(fence).as("fences strictly increase").isGreaterThan(last);
            last = fence;
        }
    }

    @Test
    void aScanThatCannotReadAnotherUsersProcessesNeverFreesAReservation() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run the CLI as nobody");
        Path jar = Cli.worldReadableCopy(tmp);
        Path leases = tmp.resolve("shared");
        Files.createDirectories(leases);
        for (Path p : List.of(tmp, leases)) {
            p.toFile().setReadable(true, false);
            p.toFile().setWritable(true, false);
            p.toFile().setExecutable(true, false);
        }
        // A launcher (root) reserves and is killed before it starts anything.
        Process launcher = new ProcessBuilder(Cli.java(), "-cp", System.getProperty("java.class.path"),
                "dev.proclive.lease.LeaseWorker", "launch", leases.toString(), "build", "before-start").start();
        started.add(launcher);
        assertThat(line(launcher)).isEqualTo("reserved");
        launcher.destroyForcibly();
        assertThat(launcher.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Files.readString(leases.resolve("build.lease"))).contains("\"state\":\"reserved\"");
        for (Path f : List.of(leases.resolve("build.lease"), leases.resolve("build.guard"))) {
            f.toFile().setReadable(true, false);
            f.toFile().setWritable(true, false);
        }
        Process rootSleeper = new ProcessBuilder("sleep", "60").start(); // a root process nobody cannot read
        started.add(rootSleeper);

        List<String> asNobody = new ArrayList<>(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups"));
        asNobody.addAll(Cli.command(jar, "lease", "acquire", "build", "--dir", leases.toString(), "--holder", "$$"));
        String script = "exec " + Cli.shellQuoted(asNobody).replace("'$$'", "$$");
        Cli.Result nobody = Cli.exec(List.of("sh", "-c", script), "");
        assertThat(nobody.exit()).as(nobody.out() + nobody.err()).isEqualTo(2);
        assertThat(Files.readString(leases.resolve("build.lease"))).contains("\"state\":\"reserved\"");

        String hidden = "mount -t proc -o hidepid=invisible proc /proc && " + script;
        Cli.Result underHidepid = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", hidden), "");
        assertThat(underHidepid.exit()).as(underHidepid.out() + underHidepid.err()).isEqualTo(2);
        assertThat(Files.readString(leases.resolve("build.lease"))).contains("\"state\":\"reserved\"");

        Cli.Result root = lease("acquire", "build", "--dir", leases.toString());
        assertThat(root.exit()).as("root reads every environment: a complete scan, no carrier").isZero();
    }

    @Test
    void runWithBadOptionsStartsNothing() {
        for (String[] args : new String[][] {{"run", "build", "--dir", dir(), "--wait", "x", "--", "true"},
            {"run", "build", "--dir", dir(), "--ttl", "0", "--", "true"},
            {"run", "build", "--dir", dir(), "--dir", dir(), "--", "true"},
            {"run", "build", "--", "true"}, {"claim", "build", "--dir", dir(), "--fence", "1"}}) {
            Cli.Result r = lease(args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(64);
        }
        assertThat(Path.of(dir())).doesNotExist();
    }

    @Test
    void aWaitingRunStartsWhenTheLeaseComesFree() throws Exception {
        Process first = background("run", "build", "--dir", dir(), "--", "sh", "-c", "echo first; sleep 1.5");
        assertThat(line(first)).isEqualTo("first");
        CompletableFuture<Cli.Result> second = CompletableFuture.supplyAsync(
                () -> lease("run", "build", "--dir", dir(), "--wait", "30", "--", "sh", "-c", "echo \"second $PROCLIVE_LEASE_FENCE\""));
        Cli.Result r = second.get(60, TimeUnit.SECONDS);
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("second 2\n");
    }
}
