package dev.proclive.cli;

import dev.proclive.Eventually;
import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.CPrograms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lease run} lets the kernel say who descends from its command (a subreaper, and a cgroup
 * where one can be made), tried on a busy machine: two loops of short-lived processes of the same
 * user run through every test, as a build beside it would, and make a scan of environments
 * inconclusive pass after pass. The command's end is recorded at once, a waiter is granted when
 * the command is killed, and a daemon that blanks its own environment keeps the lease while it
 * runs. As root a cgroup is made; as a normal user (and as {@code nobody}, tried from root) the
 * subreaper alone.
 */
@EnabledOnOs(OS.LINUX)
class LeaseTrackingIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    static final String NOBODY = "65534";
    final ObjectMapper mapper = new ObjectMapper();
    final List<Process> started = new ArrayList<>();

    @TempDir
    Path tmp;

    final List<Process> churn = new ArrayList<>();

    @BeforeEach
    void churn() throws Exception {
        for (int i = 0; i < 2; i++) {
            churn.add(dev.proclive.BusyMachine.churnLoop());
        }
    }

    /** Daemons the tests started, nobody's descendants once their {@code lease run} is gone: ended after each test. */
    final List<ProcessHandle> daemons = new ArrayList<>();

    @AfterEach
    void kill() throws Exception {
        stop(churn);
        stop(started);
        daemons.forEach(ProcessHandle::destroyForcibly); // all first: one slow to end holds up none of the others
        for (ProcessHandle d : daemons) { // ended before the directory they write into is removed
            d.onExit().get(10, TimeUnit.SECONDS);
        }
    }

    /** The daemon whose pid {@code pidText} holds, ended after the test whatever its end. */
    private long daemon(String pidText) {
        long pid = Long.parseLong(pidText.strip());
        ProcessHandle.of(pid).ifPresent(daemons::add);
        return pid;
    }

    /** The churn ends (a build beside it finished). */
    void stopChurn() throws InterruptedException {
        stop(churn);
        churn.clear();
    }

    private static void stop(List<Process> processes) throws InterruptedException {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @org.junit.jupiter.api.AfterEach
    void noteStore() {
        dev.proclive.Cgroups.note(Path.of(dir()));
    }

    /** Once every test's processes have ended: a {@code lease run} killed -9 leaves its command's cgroup behind. */
    @org.junit.jupiter.api.AfterAll
    static void removeEmptyCgroups() throws java.io.IOException {
        dev.proclive.Cgroups.removeEmptyOfNoted();
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
        return background(ProcessBuilder.Redirect.DISCARD, args);
    }

    /** {@code lease ARGS} in the background, its standard error to {@code err}. */
    private Process background(ProcessBuilder.Redirect err, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("lease"));
        all.addAll(List.of(args));
        Process p = new ProcessBuilder(Cli.command(Cli.jar(), all.toArray(new String[0])))
                .redirectError(err).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        started.add(p);
        return p;
    }

    /** Waits (up to a minute: a JVM start on a busy box) until the record is held by a process other than {@code not}. */
    private JsonNode heldByOtherThan(long not) throws Exception {
        return Eventually.until("held by a process other than " + not, Duration.ofSeconds(60),
                () -> Files.exists(Path.of(dir(), "build.lease")) ? record() : null,
                r -> r != null && r.path("state").asText().equals("held") && r.path("holder").path("pid").asLong() != not);
    }

    /** Waits until a waiter's ticket is in the lease's queue: it waits now, and is served first. */
    private void queued() throws Exception {
        Path queue = Path.of(dir(), "build.queue");
        Eventually.until("the waiter is queued", Duration.ofSeconds(60),
                () -> Files.exists(queue) && !Files.readString(queue).isBlank());
    }

    @Test
    void theCommandsEndIsRecordedAtOnceUnderChurnAndTheNextAcquireIsGranted() throws Exception {
        Process holder = children.sleeper();
        for (int round = 0; round < 6; round++) {
            Cli.Result run = lease("run", "build", "--dir", dir(), "--", "sh", "-c", "sleep .3; exit 3");
            assertThat(run.exit()).as("round %d: %s", round, run.err()).isEqualTo(3);
            JsonNode r = record();
            assertThat(r.path("state").asText()).as("round %d: %s", round, r).isEqualTo("released");
            assertThat(r.path("ended").path("how").asText()).as("round %d: %s", round, r).isEqualTo("exited");
            assertThat(r.path("ended").path("exitCode").asInt()).isEqualTo(3);
            Cli.Result next = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder.pid()));
            assertThat(next.exit()).as("round %d: %s", round, next.err()).isZero();
            assertThat(lease("release", "build", "--dir", dir(), "--fence",
                    Long.toString(mapper.readTree(next.out()).path("fence").asLong())).exit()).isZero();
        }
    }

    @Test
    void asNobodyTooTheCommandsEndIsRecordedUnderChurn() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run the CLI as nobody");
        tmp.toFile().setReadable(true, false);
        tmp.toFile().setWritable(true, false);
        tmp.toFile().setExecutable(true, false);
        Path jar = Cli.worldReadableCopy(Files.createDirectories(tmp.resolve("nobody")));
        for (int round = 0; round < 5; round++) {
            List<String> run = new ArrayList<>(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups"));
            run.addAll(Cli.command(jar, "lease", "run", "build", "--dir", dir(), "--", "sh", "-c", "sleep .3; exit 3"));
            Cli.Result r = Cli.exec(run, "");
            assertThat(r.exit()).as("round %d: %s", round, r.err()).isEqualTo(3);
            JsonNode record = record();
            assertThat(record.has("cgroup")).as("nobody can make no cgroup here: %s", record).isFalse();
            assertThat(record.path("state").asText()).as("round %d: %s", round, record).isEqualTo("released");
            assertThat(record.path("ended").path("exitCode").asInt()).isEqualTo(3);
        }
    }

    @Test
    void aWaiterIsGrantedWhenTheCommandIsKilledWhileRunLives() throws Exception {
        Process run = background("run", "build", "--dir", dir(), "--", "sleep", "120");
        long command = heldByOtherThan(run.pid()).path("holder").path("pid").asLong();
        Process waiter = background("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()),
                "--wait", "60");
        queued();
        ProcessHandle.of(command).orElseThrow().destroyForcibly();
        assertThat(waiter.waitFor(90, TimeUnit.SECONDS)).isTrue();
        assertThat(waiter.exitValue()).as("granted, not waited out: %s", record()).isZero();
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).isEqualTo(128 + 9);
    }

    @Test
    void withACgroupAWaiterIsGrantedWhenRunAndItsCommandAreKilledTogether() throws Exception {
        Process run = background("run", "build", "--dir", dir(), "--", "sh", "-c", "sleep 120 & sleep 120");
        JsonNode held = heldByOtherThan(run.pid());
        assumeTrue(held.has("cgroup"), "no cgroup can be made here (the cgroup v2 hierarchy is not writable)");
        assertThat(Files.isDirectory(Path.of(held.path("cgroup").asText()))).isTrue();
        Path said = tmp.resolve("waiter.err");
        Process waiter = background(ProcessBuilder.Redirect.to(said.toFile()), "acquire", "build", "--dir", dir(),
                "--holder", Long.toString(children.sleeper().pid()), "--wait", "60");
        queued();
        long command = held.path("holder").path("pid").asLong();
        List<ProcessHandle> all = new ArrayList<>(ProcessHandle.of(command).orElseThrow().descendants().toList());
        all.add(ProcessHandle.of(command).orElseThrow());
        run.destroyForcibly(); // SIGKILL: the supervisor is gone, nothing re-parents to it any more
        all.forEach(ProcessHandle::destroyForcibly);
        stopChurn(); // with the supervisor gone, the empty cgroup and a finished scan prove the end
        assertThat(waiter.waitFor(90, TimeUnit.SECONDS)).isTrue();
        if (waiter.exitValue() == 2) { // undecided at its deadline: what ended under each scan was not this test's
            dev.proclive.BusyMachine.assumeScanNotOutrun(Files.readString(said));
        }
        assertThat(waiter.exitValue()).as("granted: the cgroup is empty, %s", record()).isZero();
        assertThat(Files.exists(Path.of(held.path("cgroup").asText()))).as("an empty cgroup is removed").isFalse();
    }

    /** The record once its holder is a process other than {@code not} and its cgroup is named, or skipped where none can be made. */
    private JsonNode heldInACgroup(Process run) throws Exception {
        JsonNode held = heldByOtherThan(run.pid());
        assumeTrue(held.has("cgroup"), "no cgroup can be made here (the cgroup v2 hierarchy is not writable)");
        return held;
    }

    /**
     * A daemon that wrote itself into another cgroup, then {@code lease run} killed with its command:
     * the command's cgroup reads empty, but it proves who is inside, never who left; the token
     * still finds the daemon, which gets the lease, and no newcomer is let in while it writes.
     */
    @Test
    void aDaemonThatLeftTheCgroupKeepsTheLeaseAfterRunIsKilled() throws Exception {
        Path own = dev.proclive.Cgroups.own().orElse(null);
        assumeTrue(own != null && Files.isWritable(own.resolve("cgroup.procs")), "no writable cgroup v2 hierarchy here");
        Path lingerd = CPrograms.compile(tmp, "lingerd");
        Path pidFile = tmp.resolve("daemon.pid");
        Process run = background("run", "build", "--dir", dir(), "--", "sh", "-c", "\"$0\" 30 \"$1\" --leave \"$2\""
                + " && exec sleep 120", lingerd.toString(), pidFile.toString(), own.resolve("cgroup.procs").toString());
        JsonNode held = heldInACgroup(run);
        long daemon = daemon(waitFor(pidFile));
        assertThat(Files.readString(Path.of("/proc", Long.toString(daemon), "cgroup"))).as("it left")
                .doesNotContain(Path.of(held.path("cgroup").asText()).getFileName().toString());
        run.destroyForcibly(); // SIGKILL: nothing follows the command any more
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        ProcessHandle command = ProcessHandle.of(held.path("holder").path("pid").asLong()).orElseThrow();
        command.destroyForcibly();
        command.onExit().get(30, TimeUnit.SECONDS);
        Cli.Result newcomer = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
        assertThat(newcomer.exit()).as("no second writer: %s %s", newcomer.out(), newcomer.err()).isEqualTo(1);
        assertThat(record().path("holder").path("pid").asLong()).as("the daemon holds it: %s", record()).isEqualTo(daemon);
        ProcessHandle.of(daemon).ifPresent(ProcessHandle::destroyForcibly);
    }

    /**
     * A daemon that makes a cgroup of its own below the command's, moves into it and clears its
     * environment, then {@code lease run} killed with its command: it never left (the kernel says
     * the command's cgroup is populated), so the subtree's members find it, it gets the lease, and
     * no newcomer is let in while it runs; once it ended, the next acquire is granted and the
     * cgroups are removed, the one it made first.
     */
    @Test
    void aDaemonInACgroupBelowTheCommandsKeepsTheLeaseAfterRunIsKilled() throws Exception {
        Path mount = dev.proclive.Cgroups.mount().orElse(null);
        assumeTrue(mount != null && dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here");
        Path script = Files.writeString(tmp.resolve("inner.sh"), String.join("\n",
                "cg=\"$1$(sed -n 's/^0:://p' /proc/self/cgroup)\"",
                "mkdir \"$cg/inner\" || exit 3",
                "sh -c 'echo 0 > \"$1/cgroup.procs\" && echo $$ > \"$2.tmp\" && mv \"$2.tmp\" \"$2\" && exec env -i sleep 120'"
                        + " inner \"$cg/inner\" \"$2\" &",
                "exec sleep 120", ""));
        Path pidFile = tmp.resolve("daemon.pid");
        Process run = background("run", "build", "--dir", dir(), "--", "sh", script.toString(), mount.toString(),
                pidFile.toString());
        JsonNode held = heldInACgroup(run);
        Path cgroup = Path.of(held.path("cgroup").asText());
        long daemon = daemon(waitFor(pidFile));
        assertThat(Files.readString(Path.of("/proc", Long.toString(daemon), "cgroup")).strip()).as("it moved below")
                .endsWith(cgroup.getFileName() + "/inner");
        run.destroyForcibly(); // SIGKILL: nothing follows the command any more
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        ProcessHandle command = ProcessHandle.of(held.path("holder").path("pid").asLong()).orElseThrow();
        command.destroyForcibly();
        command.onExit().get(30, TimeUnit.SECONDS);
        Cli.Result newcomer = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
        assertThat(newcomer.exit()).as("no second writer: %s %s", newcomer.out(), newcomer.err()).isEqualTo(1);
        assertThat(record().path("holder").path("pid").asLong()).as("the daemon holds it: %s", record()).isEqualTo(daemon);
        ProcessHandle.of(daemon).ifPresent(ProcessHandle::destroyForcibly);
        emptied(cgroup);
        stopChurn(); // with the supervisor gone, the empty cgroup and a finished scan prove the end
        Cli.Result next = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
        dev.proclive.BusyMachine.assumeScanNotOutrun(next);
        assertThat(next.exit()).as("granted once it ended: %s %s", next.out(), next.err()).isZero();
        assertThat(cgroup).as("removed, with the cgroup made below it").doesNotExist();
    }

    /**
     * The hand-off to {@code lease run}'s command reads its environment for the token, and a command
     * read between the two halves of an exec (the JDK's {@code start()} returns once the descriptors
     * marked close-on-exec are closed, before the kernel sets the new image's environment) reads
     * empty: the token was retired (1 of 400 spawns under two churn loops), and once {@code lease
     * run} and its command were killed a newcomer was granted while a daemon the command left in its
     * cgroup, its environment blanked, ran on. The record that left is made here as it was (no
     * token, the cgroup named): the cgroup still says who is inside, and the daemon holds the lease.
     */
    @Test
    void aDaemonInTheCommandsCgroupKeepsTheLeaseWhenTheHandOffRetiredTheToken() throws Exception {
        assumeTrue(dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here");
        Path pidFile = tmp.resolve("daemon.pid");
        Process run = background("run", "build", "--dir", dir(), "--", "sh", "-c",
                "sh -c 'echo $$ > \"$0.tmp\" && mv \"$0.tmp\" \"$0\" && exec env -i sleep 120' \"$0\" & exec sleep 120",
                pidFile.toString());
        JsonNode held = heldInACgroup(run);
        long daemon = daemon(waitFor(pidFile));
        run.destroyForcibly(); // SIGKILL: nothing follows the command any more
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        com.fasterxml.jackson.databind.node.ObjectNode retired = (com.fasterxml.jackson.databind.node.ObjectNode) record();
        assertThat(retired.path("cgroup").asText()).isEqualTo(held.path("cgroup").asText());
        retired.remove(List.of("tokenDigest", "reserverUid", "startedAfter")); // as Records.withoutToken writes it
        Files.writeString(Path.of(dir(), "build.lease"), mapper.writeValueAsString(retired) + "\n");
        ProcessHandle command = ProcessHandle.of(held.path("holder").path("pid").asLong()).orElseThrow();
        command.destroyForcibly();
        command.onExit().get(30, TimeUnit.SECONDS);
        Cli.Result newcomer = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
        assertThat(newcomer.exit()).as("no second writer: %s %s", newcomer.out(), newcomer.err()).isEqualTo(1);
        assertThat(record().path("holder").path("pid").asLong()).as("the daemon holds it: %s", record()).isEqualTo(daemon);
        assertThat(record().path("adoptedBy").asText()).isEqualTo("cgroup");
        ProcessHandle.of(daemon).ifPresent(ProcessHandle::destroyForcibly);
    }

    /**
     * {@code lease run} ended by {@code lease break}: the command is told to stop with everything
     * it started in its cgroup (a shell's {@code sleep} too), and once {@code lease run} has exited
     * no cgroup of it is left, for a command alone or one with a child.
     */
    @Test
    void noCgroupIsLeftAfterABreak() throws Exception {
        assumeTrue(dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here");
        for (List<String> command : List.of(List.of("sleep", "120"), List.of("sh", "-c", "sleep 120; echo after"))) {
            List<String> args = new ArrayList<>(List.of("run", "build", "--dir", dir(), "--"));
            args.addAll(command);
            Process run = background(args.toArray(new String[0]));
            JsonNode held = heldInACgroup(run);
            Path cgroup = Path.of(held.path("cgroup").asText());
            int processes = command.size() == 2 ? 1 : 2;
            Eventually.until(command + " started inside", Duration.ofSeconds(60), () -> Files.readAllLines(
                    cgroup.resolve("cgroup.procs")).size() >= processes);
            Cli.Result broken = lease("break", "build", "--dir", dir());
            assertThat(broken.exit()).as("%s", broken).isZero();
            assertThat(run.waitFor(60, TimeUnit.SECONDS)).as("lease run ends").isTrue();
            assertThat(run.exitValue()).as("the command's status: SIGTERM").isEqualTo(143);
            assertThat(cgroup).as("removed once lease run has exited: %s", command).doesNotExist();
        }
    }

    /** {@code lease run NAME -- -d/prog}: a program whose relative path starts with {@code -} runs in its cgroup. */
    @Test
    void aProgramWhosePathStartsWithADashRuns() throws Exception {
        assumeTrue(dev.proclive.Cgroups.canBeMade(), "no writable cgroup v2 hierarchy here");
        Path prog = Files.createDirectories(tmp.resolve("-d")).resolve("prog");
        Files.writeString(prog, "#!/bin/sh\necho \"ran $* in ${PROCLIVE_LEASE_NAME}\"; cat /proc/self/cgroup\n");
        assertThat(prog.toFile().setExecutable(true)).isTrue();
        Process run = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "run", "build", "--dir", dir(), "--", "-d/prog", "-v"))
                .directory(tmp.toFile()).redirectErrorStream(true).start();
        started.add(run);
        String out = new String(run.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(run.waitFor()).as(out).isZero();
        assertThat(out).startsWith("ran -v in build\n").contains("/proclive.build.");
    }

    /**
     * A newcomer in a private cgroup namespace (a container that shares the host's PID namespace)
     * finds the record's cgroup path missing: from there it proves nothing, so the token is scanned
     * for, and the process the command left in its cgroup keeps the lease.
     */
    @Test
    void aNewcomerInAnotherCgroupNamespaceIsNotLetIn() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to make a cgroup namespace and mount cgroup2");
        Path own = dev.proclive.Cgroups.own().orElse(null);
        Path mount = dev.proclive.Cgroups.mount().orElse(null);
        assumeTrue(own != null && mount != null && Files.isWritable(own.resolve("cgroup.procs")),
                "no writable cgroup v2 hierarchy here");
        Process run = background("run", "build", "--dir", dir(), "--", "sh", "-c", "sleep 120 & wait");
        JsonNode held = heldInACgroup(run);
        run.destroyForcibly();
        assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
        ProcessHandle command = ProcessHandle.of(held.path("holder").path("pid").asLong()).orElseThrow();
        List<ProcessHandle> left = command.children().toList();
        assertThat(left).hasSize(1);
        command.destroyForcibly(); // its sleep stays in the cgroup, carrying the token
        command.onExit().get(30, TimeUnit.SECONDS);
        Path container = Files.createDirectory(own.resolve("proclive-test-container." + ProcessHandle.current().pid()));
        try {
            String acquire = Cli.shellQuoted(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir(),
                    "--holder", Long.toString(children.sleeper().pid())));
            String at = Cli.shellQuoted(List.of(mount.toString()));
            // its own view of the hierarchy, rooted at its cgroup, as a container's
            String inside = "umount -l " + at + " && mount -t cgroup2 none " + at + " && exec " + acquire;
            String script = "echo $$ > " + Cli.shellQuoted(List.of(container.resolve("cgroup.procs").toString()))
                    + " && exec unshare -C -m sh -c " + Cli.shellQuoted(List.of(inside));
            Cli.Result newcomer = Cli.exec(List.of("sh", "-c", script), "");
            assertThat(newcomer.exit()).as("no second writer: %s %s", newcomer.out(), newcomer.err()).isEqualTo(1);
            assertThat(record().path("holder").path("pid").asLong()).isEqualTo(left.get(0).pid());
        } finally {
            left.forEach(ProcessHandle::destroyForcibly);
            emptied(container);
            Files.deleteIfExists(container);
            Path cgroup = Path.of(held.path("cgroup").asText());
            emptied(cgroup);
            Files.deleteIfExists(cgroup); // no newcomer here will find it empty: its supervisor was killed
        }
    }

    /**
     * A newcomer that cannot read the record's cgroup (its mount namespace has no cgroup2 file system
     * at that path, as a sandbox's) while a daemon that cleared its environment stays inside, after
     * {@code lease run} was killed with its command: the token scan finds nobody, but the cgroup it
     * cannot read may hold the command's daemons: undecided, never granted. Seen whole, the daemon
     * is found inside and holds the lease.
     */
    @Test
    void aNewcomerThatCannotReadTheCgroupIsNotLetInWhileADaemonWithoutTheTokenStaysInside() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to mount over the cgroup2 file system in a mount namespace");
        Path own = dev.proclive.Cgroups.own().orElse(null);
        Path mount = dev.proclive.Cgroups.mount().orElse(null);
        assumeTrue(own != null && mount != null && Files.isWritable(own.resolve("cgroup.procs")),
                "no writable cgroup v2 hierarchy here");
        Path blankd = CPrograms.compile(tmp, "blankd");
        Path pidFile = tmp.resolve("daemon.pid");
        Process run = background("run", "build", "--dir", dir(), "--", "sh", "-c", "\"$0\" 120 \"$1\" && exec sleep 120",
                blankd.toString(), pidFile.toString());
        JsonNode held = heldInACgroup(run);
        long daemon = daemon(waitFor(pidFile));
        try {
            run.destroyForcibly(); // SIGKILL: nothing follows the command any more
            assertThat(run.waitFor(30, TimeUnit.SECONDS)).isTrue();
            ProcessHandle command = ProcessHandle.of(held.path("holder").path("pid").asLong()).orElseThrow();
            command.destroyForcibly(); // the daemon, its environment cleared, is all that is left inside
            command.onExit().get(30, TimeUnit.SECONDS);
            String acquire = Cli.shellQuoted(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir(),
                    "--holder", Long.toString(children.sleeper().pid())));
            String blind = "mount -t tmpfs none " + Cli.shellQuoted(List.of(mount.toString())) + " && exec " + acquire;
            Cli.Result newcomer = Cli.exec(List.of("unshare", "-m", "sh", "-c", blind), "");
            assertThat(newcomer.exit()).as("no second writer: %s %s", newcomer.out(), newcomer.err()).isEqualTo(2);
            assertThat(newcomer.err()).contains("cannot be read here");
            Cli.Result seeing = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
            assertThat(seeing.exit()).as("%s %s", seeing.out(), seeing.err()).isEqualTo(1);
            assertThat(record().path("holder").path("pid").asLong()).as("the daemon holds it: %s", record()).isEqualTo(daemon);
        } finally {
            ProcessHandle.of(daemon).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Waits until the kernel says {@code cgroup} is empty (or it is gone). */
    private static void emptied(Path cgroup) throws Exception {
        Eventually.until(cgroup + " emptied", Duration.ofSeconds(30), () -> !Files.exists(cgroup)
                || Files.readString(cgroup.resolve("cgroup.events")).contains("populated 0"));
    }

    private static String waitFor(Path file) throws Exception {
        // written after the fork and the move, however busy the machine
        Eventually.until(file + " written", Duration.ofSeconds(60), () -> Files.exists(file));
        return Files.readString(file);
    }

    /**
     * Once {@code lease run} has exited, nothing follows the daemon: its end is proven by every proof
     * left — its cgroup, where one was made, reads empty, and a scan finds no process carrying the
     * token (a daemon could have left the cgroup). Beside a build the scan may not finish: undecided,
     * saying why, until the churn ends.
     */
    @Test
    void aDaemonThatBlanksItsEnvironmentHoldsTheLeaseUntilItEnds() throws Exception {
        Cli.Result after = daemonHolds(List.of());
        assertThat(after.exit()).as(after.err()).isIn(0, 2);
        assumeOtherUsersReadable(after);
        if (after.exit() == 2) {
            assertThat(after.err()).contains("cannot be proven: ", "ended ", "passes"); // processes ended under the scan
        }
        stopChurn(); // a newcomer then proves the daemon's end
        Cli.Result quiet = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()), "--wait", "20");
        dev.proclive.BusyMachine.assumeScanNotOutrun(quiet);
        assumeOtherUsersReadable(quiet);
        assertThat(quiet.exit()).as(quiet.err()).isZero();
    }

    /**
     * Skips the rest of a test, saying why, when {@code answered} is undecided because a process of
     * another user, started since the lease was reserved (a cron job, another login, a build of
     * root's), could not be read: as a normal user that is the library's honest answer, as {@code
     * LeaseSpawnIT} skips on it too. Root reads every process, so there (and in CI) the test goes on.
     */
    private static void assumeOtherUsersReadable(Cli.Result answered) {
        String said = answered.err();
        boolean otherUsers = said.contains("not readable by this user") || said.contains(" runs as uid ")
                || said.contains("a user that cannot be read") || said.contains("hides other users' processes");
        assumeTrue(answered.exit() != 2 || !otherUsers || "root".equals(System.getProperty("user.name")),
                "another user's process made the scan incomplete, as it must for a normal user: " + said.strip());
    }

    /**
     * As a normal user no cgroup can be made here: the subreaper makes the daemon the holder, but
     * once {@code lease run} has exited nothing tracks it, and its end is proven only by a scan,
     * which root's processes (unreadable to nobody) leave partial: undecided, saying why and the
     * way out, until someone who can read every process looks.
     */
    @Test
    void asNobodyTooADaemonThatBlanksItsEnvironmentHoldsTheLease() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run the CLI as nobody");
        for (Path p : List.of(tmp)) {
            p.toFile().setReadable(true, false);
            p.toFile().setWritable(true, false);
            p.toFile().setExecutable(true, false);
        }
        Cli.Result after = daemonHolds(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups"));
        assertThat(after.exit()).as("%s %s", after.out(), after.err()).isEqualTo(2);
        assertThat(after.err()).contains("is undecided", "cannot be proven: ", "proclive lease break build");
        stopChurn(); // a newcomer that reads every process proves the daemon's end
        Cli.Result root = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()), "--wait", "20");
        dev.proclive.BusyMachine.assumeScanNotOutrun(root);
        assertThat(root.exit()).as(root.err()).isZero();
    }

    /**
     * Of two processes the command leaves, one carrying the token inside the cgroup (with a zombie child)
     * and one that left the cgroup (where it could: as root) and cleared its environment, the lease goes to
     * the one no proof would find once {@code lease run} has exited, though it is the younger; the other
     * keeps it held after it.
     */
    @Test
    void ofWhatTheCommandLeavesTheLeaseGoesToTheOneNoOtherProofFinds() throws Exception {
        leftBehindUnseenHolds(false);
    }

    /** As above, the one no proof finds being a child of the other, not yet an orphan when the command ends. */
    @Test
    void aChildOfWhatTheCommandLeftThatNoOtherProofFindsHoldsTheLease() throws Exception {
        leftBehindUnseenHolds(true);
    }

    private void leftBehindUnseenHolds(boolean asChild) throws Exception {
        Path pidFile = tmp.resolve("b.pid");
        String escape = "cg=$(sed -n 's/^0:://p' /proc/self/cgroup);"
                + " mnt=$(awk '$9 == \"cgroup2\" {print $5; exit}' /proc/self/mountinfo);"
                + " echo $$ > \"$mnt$(dirname \"$cg\")/cgroup.procs\" 2>/dev/null;"
                + " echo $$ > " + pidFile + "; exec sleep 120 >/dev/null 2>&1";
        String b = "env -i sh -c '" + escape.replace("'", "'\\''") + "' </dev/null >/dev/null 2>&1 &";
        Path aPidFile = tmp.resolve("a.pid");
        // its first child ends at once and is never reaped: a zombie, older than the one no proof finds
        String a = "echo $$ > " + aPidFile + "; true & " + (asChild ? b + " " : "") + "exec sleep 120";
        Cli.Result run = lease("run", "build", "--dir", dir(), "--", "sh", "-c",
                "(exec sh -c '" + a.replace("'", "'\\''") + "' </dev/null >/dev/null 2>&1 &); sleep 0.2;"
                        + (asChild ? "" : " (exec " + b + ");")
                        + " while [ ! -s " + pidFile + " ]; do sleep 0.05; done");
        assertThat(run.exit()).as(run.err()).isZero();
        ProcessHandle first = ProcessHandle.of(Long.parseLong(waitFor(aPidFile).strip())).orElseThrow();
        ProcessHandle unseen = ProcessHandle.of(Long.parseLong(waitFor(pidFile).strip())).orElseThrow();
        try {
            heldByTheUnseen(asChild, first, unseen);
        } finally {
            first.destroy();
            unseen.destroy();
        }
    }

    private void heldByTheUnseen(boolean asChild, ProcessHandle first, ProcessHandle unseen) throws Exception {
        try {
            if (asChild) {
                assertThat(unseen.parent().map(ProcessHandle::pid)).as("a child of what was left").contains(first.pid());
            }
            JsonNode r = record();
            assertThat(r.path("state").asText()).as("%s", r).isEqualTo("held");
            assertThat(r.path("holder").path("pid").asLong()).as("the one no other proof finds: %s", r)
                    .isEqualTo(unseen.pid());
        } finally {
            unseen.destroy();
        }
        Path stat = Path.of("/proc", Long.toString(unseen.pid()), "stat");
        Eventually.until("it ended (a zombie of the sleep that holds it as a child)", Duration.ofSeconds(60), () -> {
            try {
                String line = Files.readString(stat);
                return line.substring(line.lastIndexOf(')') + 2, line.lastIndexOf(')') + 3);
            } catch (java.nio.file.NoSuchFileException gone) {
                return "gone";
            }
        }, state -> state.equals("Z") || state.equals("gone"));
        Cli.Result newcomer = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
        assertThat(newcomer.exit()).as("not granted while the first one runs: %s %s", newcomer.out(), newcomer.err())
                .isIn(1, 2);
    }

    /**
     * {@code lease run} of a daemon that blanks its environment, run through {@code as}: it holds the
     * lease while it runs; what a newcomer run the same way got once it ended (ended by the test).
     */
    private Cli.Result daemonHolds(List<String> as) throws Exception {
        Path blankd = CPrograms.compile(tmp, "blankd");
        Path pidFile = tmp.resolve("daemon.pid");
        Path jar = as.isEmpty() ? Cli.jar() : Cli.worldReadableCopy(Files.createDirectories(tmp.resolve("nobody")));
        List<String> command = new ArrayList<>(as);
        command.addAll(Cli.command(jar, "lease", "run", "build", "--dir", dir(), "--", blankd.toString(), "120",
                pidFile.toString()));
        Cli.Result run = Cli.exec(command, "");
        assertThat(run.exit()).as(run.err()).isZero();
        long daemon = daemon(waitFor(pidFile)); // written after the double fork: run may have exited first
        ProcessHandle d = ProcessHandle.of(daemon).orElseThrow();
        String script;
        try {
            JsonNode r = record();
            assertThat(r.path("state").asText()).as("%s", r).isEqualTo("held");
            assertThat(r.path("holder").path("pid").asLong()).as("the daemon holds it: %s", r).isEqualTo(daemon);
            assertThat(r.path("adoptedBy").asText()).isIn("subreaper", "cgroup");
            List<String> newcomer = new ArrayList<>(as);
            newcomer.addAll(Cli.command(jar, "lease", "acquire", "build", "--dir", dir(), "--holder", "$$"));
            script = "exec " + Cli.shellQuoted(newcomer).replace("'$$'", "$$");
            Cli.Result refused = Cli.exec(List.of("sh", "-c", script), "");
            assertThat(refused.exit()).as("a second writer: %s %s", refused.out(), refused.err()).isEqualTo(1);
        } finally {
            d.destroy(); // it ends (SIGTERM), as it would by itself, once the second writer was seen refused
        }
        d.onExit().get(60, TimeUnit.SECONDS);
        return Cli.exec(List.of("sh", "-c", script), "");
    }
}
