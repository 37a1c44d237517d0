package dev.proclive.cli;

import dev.proclive.Eventually;
import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.lease.EtcdCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code proclive lease … --etcd} as its users run it, against a real etcd member: {@code lease run}
 * keeping its command's grant alive and ending it at the exit, {@code lease keep} keeping a hook's
 * grant alive and ending it the moment the holder dies, and a holder on another machine (a UTS and
 * mount namespace with another host name, machine id and boot id; root) seen as undecided, never
 * dead.
 */
@EnabledOnOs(OS.LINUX)
class EtcdCliIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    @TempDir
    static Path dir;
    static EtcdCluster etcd;
    static int prefixes;

    final ObjectMapper mapper = new ObjectMapper();
    String url;
    String prefix;

    @BeforeAll
    static void startEtcd() throws Exception {
        etcd = EtcdCluster.start(dir, 1);
    }

    @AfterAll
    static void stopEtcd() throws Exception {
        if (etcd != null) {
            etcd.close();
        }
    }

    private String[] args(String... words) {
        if (url == null) {
            url = etcd.endpoints().get(0).toString();
            prefix = "cli" + (++prefixes) + "/";
        }
        List<String> all = new ArrayList<>(List.of(words));
        all.addAll(List.of("--etcd", url, "--prefix", prefix));
        return all.toArray(new String[0]);
    }

    private Process start(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        children.adopt(p);
        return p;
    }

    private JsonNode show() throws IOException {
        Cli.Result r = Cli.run(args("lease", "show", "build"));
        assertThat(r.exit()).as(r.toString()).isZero();
        return mapper.readTree(r.out());
    }

    /** lease run --ttl 3 of a command that says when it gets SIGTERM, with {@code more} options; its output, both streams. */
    private Process runUntilTerm(String... more) throws IOException {
        List<String> words = new ArrayList<>(List.of("lease", "run", "build", "--ttl", "3"));
        words.addAll(List.of(more));
        List<String> run = new ArrayList<>(Cli.command(Cli.jar(), args(words.toArray(new String[0]))));
        // on TERM it says so and ends its sleep too: nothing left holding the output open for a minute
        run.addAll(List.of("--", "sh", "-c", "trap 'echo got TERM; kill $! 2>/dev/null; exit 9' TERM; sleep 60 & wait; sleep 60 & wait"));
        Process p = new ProcessBuilder(run).redirectErrorStream(true).start();
        children.adopt(p);
        return p;
    }

    private void awaitHeld() throws Exception {
        Eventually.until("held", Duration.ofSeconds(60),
                () -> Cli.run(args("lease", "show", "build")).out().contains("\"state\":\"held\""));
    }

    @Test
    void aLostLeaseIsSaidAtThreeQuartersOfItsTtlAndTheCommandIsSentSigterm() throws Exception {
        Process p = runUntilTerm();
        awaitHeld();
        EtcdCluster.Member member = etcd.members.get(0);
        member.signal("STOP"); // no answer to anything: the keep-alive cannot be confirmed
        long stopped = System.nanoTime();
        try {
            java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8));
            StringBuilder said = new StringBuilder();
            String line;
            while ((line = out.readLine()) != null && !line.contains("is lost")) {
                said.append(line).append('\n');
            }
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
            said.append(line).append('\n');
            member.signal("CONT"); // the end is recorded once etcd answers again
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            out.lines().forEach(rest -> said.append(rest).append('\n')); // through the reader: it may hold lines read ahead
            assertThat(said.toString()).contains("is lost", "sending the command SIGTERM", "got TERM");
            assertThat(p.exitValue()).isEqualTo(9);
            // 3/4 of the TTL after the last confirmed keep-alive (at most a third of it before the stop),
            // with room for a busy machine; a call that waits for a member times out after 5 s, past the TTL
            assertThat(took).as("said before the TTL of 3 s could run out, not when a blocked call failed").isLessThan(4_500);
        } finally {
            member.signal("CONT");
        }
    }

    @Test
    void withOnLostWarnTheCommandGoesOn() throws Exception {
        Process p = runUntilTerm("--on-lost", "warn");
        awaitHeld();
        EtcdCluster.Member member = etcd.members.get(0);
        java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        StringBuilder said = new StringBuilder();
        member.signal("STOP");
        try {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                said.append(line).append('\n');
                if (line.contains("is lost")) {
                    break;
                }
            }
            assertThat(said.toString()).contains("is lost", "the command goes on (--on-lost warn)")
                    .doesNotContain("sending the command SIGTERM", "got TERM");
            assertThat(p.isAlive()).as("still running after the lease was lost: %s", said).isTrue();
        } finally {
            member.signal("CONT");
        }
        p.toHandle().destroy(); // SIGTERM to lease run, passed on to the command (Process.destroy would close its output)
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        out.lines().forEach(rest -> said.append(rest).append('\n')); // through the reader: it may hold lines read ahead
        assertThat(said.toString()).contains("warning: ", "is lost", "--on-lost warn", "got TERM");
    }

    @Test
    void leaseRunKeepsItsCommandsGrantAliveAndEndsItWithTheStatus() throws Exception {
        Path go = dir.resolve("go-" + System.nanoTime());
        List<String> run = new ArrayList<>(Cli.command(Cli.jar(), args("lease", "run", "build", "--ttl", "2")));
        run.addAll(List.of("--", "sh", "-c", "while [ ! -e '" + go + "' ]; do sleep 0.1; done; exit 5"));
        Process p = start(run);
        awaitHeld(); // however long the JVM takes to start on a busy machine
        keptPast(Duration.ofSeconds(4)); // two TTLs: only this JVM's keeping keeps it
        Files.writeString(go, "");
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isEqualTo(5);
        JsonNode r = show();
        assertThat(r.path("state").asText()).isEqualTo("released");
        assertThat(r.path("ended").path("how").asText()).isEqualTo("exited");
        assertThat(r.path("ended").path("exitCode").asInt()).isEqualTo(5);
    }

    @Test
    void withoutAKeeperAHooksGrantExpiresAfterItsTtl() throws Exception {
        long holder = children.sleeper().pid();
        assertThat(Cli.run(args("lease", "acquire", "build", "--holder", Long.toString(holder), "--ttl", "1")).exit()).isZero();
        Eventually.until("expired after its TTL of 1 s", Duration.ofSeconds(30),
                () -> Cli.run(args("lease", "show", "build")).exit() == 3);
    }

    @Test
    void leaseKeepKeepsAHooksGrantAndEndsItTheMomentItsHolderDies() throws Exception {
        // The keeper first, as README says: a grant it has not found yet lives only its TTL.
        Process keeper = new ProcessBuilder(Cli.command(Cli.jar(), args("lease", "keep"))).start();
        children.adopt(keeper);
        java.io.BufferedReader said = new java.io.BufferedReader(new java.io.InputStreamReader(keeper.getErrorStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        assertThat(said.readLine()).as("the keeper has started").contains("keeping the grants");
        Process holder = start(List.of("sleep", "120"));
        Cli.Result acquired = Cli.run(args("lease", "acquire", "build", "--holder", Long.toString(holder.pid()), "--ttl", "5"));
        assertThat(acquired.exit()).as(acquired.toString()).isZero();
        keptPast(Duration.ofSeconds(6)); // past its TTL: kept alive by lease keep alone

        CompletableFuture<Cli.Result> waiting = CompletableFuture.supplyAsync(() ->
                Cli.run(args("lease", "acquire", "build", "--holder", Long.toString(sleeperQuietly()), "--wait", "60",
                        "--print", "fence")));
        queued(waiting);
        long killed = System.nanoTime();
        holder.destroyForcibly();
        Cli.Result granted = waiting.get(60, TimeUnit.SECONDS);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        assertThat(granted.exit()).as(granted.toString()).isZero();
        assertThat(ms).as("the waiter exited %d ms after the kill, before the TTL of 5000 ms could run out", ms)
                .isLessThan(5_000);

        keeper.toHandle().destroy(); // TERM, its streams left open (Process.destroy closes them): the orderly end
        assertThat(keeper.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(said.readLine()).contains("stopped keeping");
        assertThat(keeper.exitValue()).as("stopped as its help says").isZero();
    }

    /** {@code lease keep}, started; its stderr, a line at a time. */
    private java.io.BufferedReader keeper(List<Process> into) throws IOException {
        Process keeper = new ProcessBuilder(Cli.command(Cli.jar(), args("lease", "keep"))).start();
        children.adopt(keeper);
        into.add(keeper);
        return new java.io.BufferedReader(new java.io.InputStreamReader(keeper.getErrorStream(),
                java.nio.charset.StandardCharsets.UTF_8));
    }

    /** A hook's grant for a live sleeper, TTL {@code ttl}, that only a keeper keeps alive; the holder's pid. */
    private long hooksGrant(Duration ttl) throws IOException {
        long holder = children.sleeper().pid();
        Cli.Result acquired = Cli.run(args("lease", "acquire", "build", "--holder", Long.toString(holder), "--ttl",
                Long.toString(ttl.toSeconds())));
        assertThat(acquired.exit()).as(acquired.toString()).isZero();
        return holder;
    }

    /**
     * Waits until the record is still held {@code past} after it was granted: only a keeper could
     * have kept it that long (a record is not rewritten to stay alive: the keep-alive of the etcd
     * lease it is on keeps it).
     */
    private JsonNode keptPast(Duration past) throws Exception {
        JsonNode r = Eventually.until("held " + past + " after its grant", past.plusSeconds(30), this::show,
                now -> !now.path("state").asText().equals("held") || java.time.Instant.now()
                        .isAfter(java.time.Instant.parse(now.path("acquiredAt").asText()).plus(past)));
        assertThat(r.path("state").asText()).as("still held: %s", r).isEqualTo("held");
        return r;
    }

    /** Waits until a waiter's key is in the lease's queue (or it is answered): it waits now. */
    private void queued(CompletableFuture<Cli.Result> waiting) throws Exception {
        try (dev.proclive.etcd.EtcdGateway raw = dev.proclive.etcd.EtcdGateway.open(etcd.endpoints(),
                java.util.Optional.empty(), Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper())) {
            Eventually.until("the waiter is queued", Duration.ofSeconds(60),
                    () -> waiting.isDone() || !raw.list(prefix + "build.queue/").isEmpty());
        }
    }

    /** The grant is still its holder's after more than its TTL more: kept. */
    private void stillKeptAfterItsTtl(long holder, Duration ttl) throws Exception {
        java.time.Instant from = java.time.Instant.now();
        JsonNode r = Eventually.until("held " + ttl + " more", ttl.plusSeconds(30), this::show, // only the keeper keeps it
                now -> !now.path("state").asText().equals("held") || java.time.Instant.now().isAfter(from.plus(ttl)));
        assertThat(r.path("state").asText()).as("%s", r).isEqualTo("held");
        assertThat(r.path("holder").path("pid").asLong()).isEqualTo(holder);
    }

    /**
     * A TTL of {@code quiet} whole seconds on a quiet machine, more on a busy one: room for what
     * must happen before it runs out (a JVM start, a keeper's first read), and no more.
     */
    private static Duration ttl(int quiet) {
        return Duration.ofSeconds((long) Math.ceil(quiet * Eventually.slowness()));
    }

    @Test
    void leaseKeepRidesOutAStalledMemberAndItsGrantsStay() throws Exception {
        List<Process> keepers = new ArrayList<>();
        java.io.BufferedReader said = keeper(keepers);
        assertThat(said.readLine()).as("it says it keeps once a member answered").contains("keeping the grants");
        // past a stalled call's deadline (5 s) after a keep-alive a third of the TTL late, with room to spare
        Duration ttl = Duration.ofSeconds(15);
        long holder = hooksGrant(ttl);
        EtcdCluster.Member member = etcd.members.get(0);
        String firstFailure = null;
        member.signal("STOP");
        try {
            // a member that answers nothing, longer than a call's deadline (5 s): the keeper says so
            CompletableFuture<String> failed = CompletableFuture.supplyAsync(() -> {
                try {
                    for (String line = said.readLine(); line != null; line = said.readLine()) {
                        if (line.contains("cannot")) {
                            return line;
                        }
                    }
                    return null;
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            firstFailure = failed.get(60, TimeUnit.SECONDS);
            assertThat(firstFailure).as("the keeper says a call failed, and goes on").isNotNull();
        } finally {
            member.signal("CONT");
        }
        assertThat(keepers.get(0).isAlive()).as("the keeper stays").isTrue();
        stillKeptAfterItsTtl(holder, ttl);
        assertThat(keepers.get(0).isAlive()).isTrue();
        keepers.get(0).toHandle().destroy();
        assertThat(keepers.get(0).waitFor(30, TimeUnit.SECONDS)).isTrue();
        List<String> lines = new ArrayList<>(List.of(firstFailure));
        lines.addAll(said.lines().toList());
        assertThat(lines).as("it said what failed and that it tried again").anyMatch(l -> l.contains("trying again"));
        assertThat(keepers.get(0).exitValue()).isZero();
    }

    @Test
    void leaseKeepReadsAPrefixLargerThanOneAnswer() throws Exception {
        Duration ttl = ttl(6); // the keeper's start and its read of the prefix fit in it
        long holder = hooksGrant(ttl);
        String value = java.util.Base64.getEncoder().encodeToString(new byte[16_000]);
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        for (int i = 0; i < 400; i++) { // 6.4 MB of values under the prefix, more than one answer may carry
            String key = java.util.Base64.getEncoder().encodeToString((prefix + "junk/" + i)
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
            http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/v3/kv/put"))
                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"key\":\"" + key + "\",\"value\":\""
                            + value + "\"}")).build(), java.net.http.HttpResponse.BodyHandlers.discarding());
        }
        List<Process> keepers = new ArrayList<>();
        java.io.BufferedReader said = keeper(keepers);
        assertThat(said.readLine()).as("it read them all").contains("keeping the grants");
        stillKeptAfterItsTtl(holder, ttl);
        assertThat(keepers.get(0).isAlive()).isTrue();
    }

    @Test
    void leaseKeepAgainstNoMemberSaysWhyAndTriesAgainNeverThatItKeeps() throws Exception {
        Process keeper = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "keep", "--etcd", "http://127.0.0.1:1")).start();
        children.adopt(keeper);
        java.io.BufferedReader said = new java.io.BufferedReader(new java.io.InputStreamReader(keeper.getErrorStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        String first = said.readLine();
        assertThat(first).contains("cannot read the grants", "no etcd member answered", "trying again");
        assertThat(said.readLine()).contains("trying again");
        assertThat(keeper.isAlive()).isTrue();
    }

    private long sleeperQuietly() {
        try {
            return children.sleeper().pid();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aNameThatWouldBeAFenceKeyIsBadInputAndNothingRuns() throws Exception {
        Path ran = dir.resolve("ran-" + System.nanoTime());
        Cli.Result acquire = Cli.run(args("lease", "acquire", "build.fence"));
        assertThat(acquire.exit()).as(acquire.toString()).isEqualTo(65);
        assertThat(acquire.err()).contains("'.fence'");
        List<String> run = new ArrayList<>(Cli.command(Cli.jar(), args("lease", "run", "build.fence")));
        run.addAll(List.of("--", "sh", "-c", "echo ran > " + Cli.shellQuoted(List.of(ran.toString()))));
        Cli.Result r = Cli.exec(run, "");
        assertThat(r.exit()).as(r.toString()).isEqualTo(65);
        assertThat(ran).doesNotExist();
    }

    @Test
    void noMemberAnsweringExits74() {
        Cli.Result r = Cli.run("lease", "acquire", "build", "--etcd", "http://127.0.0.1:1");
        assertThat(r.exit()).as(r.toString()).isEqualTo(74);
        assertThat(r.err()).contains("no etcd member answered");
    }

    /** {@code proclive ARGS} on "another machine": another host name, machine id and boot id, in private namespaces. */
    private List<String> elsewhere(String... args) throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root for a UTS and mount namespace with another machine id; runs in CI as root");
        Path machine = Files.writeString(dir.resolve("machine-id"), AnotherMachineIT.OTHER_MACHINE + "\n");
        Path boot = Files.writeString(dir.resolve("boot_id"), AnotherMachineIT.OTHER_BOOT + "\n");
        StringBuilder script = new StringBuilder("set -e\nhostname other-machine\n");
        for (String target : AnotherMachineIT.ID_FILES) {
            if (Files.isRegularFile(Path.of(target))) {
                script.append("mount --bind '").append(machine).append("' ").append(target).append('\n');
            }
        }
        script.append("mount --bind '").append(boot).append("' /proc/sys/kernel/random/boot_id\n");
        script.append("exec ").append(Cli.shellQuoted(Cli.command(Cli.jar(), args))).append('\n');
        return List.of("unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c", script.toString());
    }

    @Test
    void aHolderOnAnotherMachineIsUndecidedUntilItsRecordExpiresNeverDead() throws Exception {
        // A TTL with room for a JVM start on a busy machine between the grant there and the question here.
        List<String> take = elsewhere(args("lease", "acquire", "build", "--holder", Long.toString(children.sleeper().pid()), "--ttl",
                Long.toString(ttl(5).toSeconds())));
        Cli.Result there = Cli.exec(take, "");
        assertThat(there.exit()).as(there.toString()).isZero();
        assertThat(mapper.readTree(there.out()).path("holder").path("host").asText()).isEqualTo("other-machine");

        Cli.Result here = Cli.run(args("lease", "acquire", "build", "--holder", Long.toString(children.sleeper().pid())));
        assertThat(here.exit()).as("another machine's live holder: undecided, %s", here).isEqualTo(2);
        assertThat(here.err() + here.out()).contains("other_host");
        Eventually.until("expired: nobody there keeps it alive", Duration.ofSeconds(60),
                () -> Cli.run(args("lease", "show", "build")).exit() == 3);
        Cli.Result later = Cli.run(args("lease", "acquire", "build", "--holder", Long.toString(children.sleeper().pid())));
        assertThat(later.exit()).as(later.toString()).isZero();
    }

    @Test
    void aKeeperOnTheHoldersMachineEndsItAtItsDeathForAWaiterOnAnother() throws Exception {
        Process holder = start(List.of("sleep", "120"));
        Cli.Result there = Cli.exec(elsewhere(args("lease", "acquire", "build", "--holder", Long.toString(holder.pid()),
                "--ttl", "30")), "");
        assertThat(there.exit()).as(there.toString()).isZero();
        start(elsewhere(args("lease", "keep")));
        CompletableFuture<Cli.Result> waiting = CompletableFuture.supplyAsync(() ->
                Cli.run(args("lease", "acquire", "build", "--holder", Long.toString(sleeperQuietly()), "--wait", "60")));
        queued(waiting);
        assertThat(waiting).isNotDone();
        long killed = System.nanoTime();
        holder.destroyForcibly();
        Cli.Result granted = waiting.get(60, TimeUnit.SECONDS);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        assertThat(granted.exit()).as(granted.toString()).isZero();
        assertThat(ms).as("granted %d ms after the kill, the TTL being 30 s", ms).isLessThan(3_000);
    }

    /**
     * {@code lease renew} from another process at a longer TTL puts the record on that process's etcd lease, which
     * nobody kept alive once it exited: the record went with it a TTL later, its holder told {@code EXPIRED} only as the
     * lease became anyone's. The holder's store now keeps that etcd lease alive too.
     */
    @Test
    void aRenewalByAnotherProcessAtAnotherTtlLeavesTheGrantKeptByItsHolder() throws Exception {
        args(); // this test's endpoint and prefix
        long ttl = (long) Math.ceil(2 * Eventually.slowness());
        long longer = ttl + 2; // not shorter: its etcd lease would then last the old TTL, kept or not
        try (dev.proclive.lease.LeaseStore store = dev.proclive.lease.LeaseStore.builder()
                .etcd(List.of(java.net.URI.create(url))).prefix(prefix)
                .policy(dev.proclive.lease.LeasePolicy.builder().ttl(Duration.ofSeconds(ttl)).build()).build()) {
            dev.proclive.lease.Lease lease = ((dev.proclive.lease.Acquisition.Granted) store.acquire("build",
                    dev.proclive.ProcLive.current().orElseThrow())).lease();
            Cli.Result renewed = Cli.run(args("lease", "renew", "build", "--fence", Long.toString(lease.fence()),
                    "--ttl", Long.toString(longer)));
            assertThat(renewed.exit()).as(renewed.toString()).isZero();
            Thread.sleep(Duration.ofSeconds(3 * longer).toMillis()); // three of its new TTLs
            assertThat(lease.lost()).as("kept by its holder's store").isNotDone();
            assertThat(lease.isValid()).isTrue();
            assertThat(show().get("state").asText()).isEqualTo("held");
            assertThat(lease.release()).isTrue();
        }
    }
}
