package dev.proclive.cli;

import dev.proclive.lease.book.LeaseJson;
import dev.proclive.Eventually;
import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.LeaseRecord;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code proclive lease ...} as a shell hook runs it: outputs and exit codes of DESIGN.md's CLI. */
@EnabledOnOs(OS.LINUX)
class LeaseCliIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    final ObjectMapper mapper = new ObjectMapper();

    @TempDir
    Path tmp;

    private String dir() {
        return tmp.resolve("leases").toString();
    }

    private Cli.Result lease(String... args) {
        List<String> all = new ArrayList<>(List.of("lease"));
        all.addAll(List.of(args));
        return Cli.run(all.toArray(new String[0]));
    }

    private JsonNode json(Cli.Result r) throws Exception {
        return mapper.readTree(r.line());
    }

    @Test
    void theDefaultHolderIsTheOwnerNotTheCli() throws Exception {
        Cli.Result r = lease("acquire", "build", "--dir", dir());
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode record = json(r);
        assertThat(record.path("holder").path("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
        assertThat(record.path("writer").path("pid").asLong()).isNotEqualTo(ProcessHandle.current().pid());
        assertThat(record.path("fence").asLong()).isEqualTo(1);
        assertThat(record.path("state").asText()).isEqualTo("held");
        assertThat(record.has("verdict")).isFalse();
    }

    @Test
    void aLiveHolderKeepsItAndExit1SaysWhy() throws Exception {
        long pid = children.sleeper().pid();
        assertThat(lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(pid)).exit()).isZero();
        Cli.Result r = lease("acquire", "build", "--dir", dir());
        assertThat(r.exit()).isEqualTo(1);
        JsonNode line = json(r);
        assertThat(line.path("holder").path("pid").asLong()).isEqualTo(pid);
        assertThat(line.path("verdict").path("liveness").asText()).isEqualTo("alive");
        assertThat(line.path("verdict").path("reason").asText()).isEqualTo("matched");

        Cli.Result shown = lease("show", "build", "--dir", dir());
        assertThat(shown.exit()).isZero();
        assertThat(json(shown).path("verdict").path("reason").asText()).isEqualTo("matched");
    }

    @Test
    void aDeadHoldersLeaseIsTakenAndTheFenceGrows() throws Exception {
        Process s = children.sleeper();
        assertThat(lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(s.pid())).exit()).isZero();
        s.destroyForcibly();
        s.waitFor(10, TimeUnit.SECONDS);
        Cli.Result r = lease("acquire", "build", "--dir", dir());
        assertThat(r.exit()).as(r.err()).isZero();
        JsonNode record = json(r);
        assertThat(record.path("fence").asLong()).isEqualTo(2);
        assertThat(record.path("previous").path("reason").asText()).isEqualTo("exited");
        assertThat(record.path("previous").path("fence").asLong()).isEqualTo(1);
    }

    @Test
    void renewReleaseBreakAndShowFollowTheFence() throws Exception {
        assertThat(lease("acquire", "build", "--dir", dir()).exit()).isZero();
        Cli.Result renewed = lease("renew", "build", "--dir", dir(), "--fence", "1");
        assertThat(renewed.exit()).as(renewed.err()).isZero();
        assertThat(json(renewed).path("fence").asLong()).isEqualTo(1);
        assertThat(lease("renew", "build", "--dir", dir(), "--fence", "2").exit()).isEqualTo(1);
        Cli.Result refused = lease("release", "build", "--dir", dir(), "--fence", "2");
        assertThat(refused.exit()).isEqualTo(1);
        assertThat(refused.err()).as("says why").contains("is at fence 1, not 2: nothing released");
        assertThat(lease("release", "build", "--dir", dir(), "--fence", "1").exit()).isZero();
        assertThat(lease("release", "build", "--dir", dir(), "--fence", "1").exit()).as("again").isZero();
        assertThat(lease("renew", "build", "--dir", dir(), "--fence", "1").exit()).isEqualTo(1);
        assertThat(json(lease("acquire", "build", "--dir", dir())).path("fence").asLong()).isEqualTo(2);
        Cli.Result broken = lease("break", "build", "--dir", dir());
        assertThat(broken.exit()).isZero();
        assertThat(json(broken).path("state").asText()).isEqualTo("released");
        assertThat(json(broken).path("fence").asLong()).isEqualTo(2);
        assertThat(json(lease("acquire", "build", "--dir", dir())).path("fence").asLong()).isEqualTo(3);
    }

    @Test
    void noRecordAndNoHolderExit3WithNothingOnStdout() throws Exception {
        Files.createDirectories(Path.of(dir()));
        for (Cli.Result r : List.of(lease("show", "none", "--dir", dir()), lease("break", "none", "--dir", dir()))) {
            assertThat(r.exit()).isEqualTo(3);
            assertThat(r.out()).isEmpty();
        }
        Process s = children.sleeper();
        long pid = s.pid();
        s.destroyForcibly();
        s.waitFor(10, TimeUnit.SECONDS);
        Cli.Result r = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(pid));
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.out()).isEmpty();
    }

    private void recordOnAnotherHost(Instant renewedAt) throws Exception {
        Identity me = ProcLive.current().orElseThrow();
        Identity elsewhere = new Identity(me.pid(), me.start(), "", "another-host", "agent", "");
        Files.createDirectories(Path.of(dir()));
        Files.writeString(Path.of(dir(), "build.lease"), LeaseJson.write(new LeaseRecord("build", 5, LeaseRecord.State.HELD,
                elsewhere, elsewhere, renewedAt, renewedAt, Duration.ofSeconds(30), Optional.empty())));
    }

    @Test
    void anUnknownHolderIsUndecidedUnlessTakeUnknownAndItsTtlPassed() throws Exception {
        Instant fresh = Instant.now();
        recordOnAnotherHost(fresh);
        Cli.Result r = lease("acquire", "build", "--dir", dir());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(json(r).path("verdict").path("reason").asText()).isEqualTo("other_host");
        assertThat(json(r).has("eligibleAt")).isFalse();

        Cli.Result take = lease("acquire", "build", "--dir", dir(), "--take-unknown");
        assertThat(take.exit()).isEqualTo(2);
        assertThat(Instant.parse(json(take).path("eligibleAt").asText())).isAfter(fresh.plusSeconds(29));

        recordOnAnotherHost(fresh.minusSeconds(60));
        Cli.Result taken = lease("acquire", "build", "--dir", dir(), "--take-unknown", "--ttl", "10");
        assertThat(taken.exit()).as(taken.err()).isZero();
        assertThat(json(taken).path("fence").asLong()).isEqualTo(6);
        assertThat(json(taken).path("ttlMillis").asLong()).isEqualTo(10_000);
        assertThat(json(taken).path("previous").path("liveness").asText()).isEqualTo("unknown");
    }

    @ParameterizedTest
    @ValueSource(strings = {"acquire build --dir D --fence abc", "acquire build --dir D --ttl 0",
            "acquire build --dir D --ttl 1.5", "acquire build --dir D --holder abc",
            "acquire build --dir D --holder 99999999999999999999", "acquire build --dir D --holder +1", "acquire build",
            "acquire --dir D", "renew build --dir D", "release build --dir D --fence -1", "frob build --dir D",
            "release build --dir D --fence 1 --ttl 5", "show build --dir D extra", "acquire build --dir D --ttl",
            "renew build --dir D --fence 9223372036854775808", "release build --dir D --fence 1e3",
            "acquire .bad --dir D --ttl 0"})
    void badUsageExits64(String line) {
        Cli.Result r = lease(line.replace("D", dir()).split(" "));
        assertThat(r.exit()).as(line + ": " + r.err()).isEqualTo(64);
        assertThat(r.err().strip()).doesNotContain("\n").doesNotContain("Exception");
        assertThat(Path.of(dir())).doesNotExist();
    }

    @ParameterizedTest
    @ValueSource(strings = {".hidden", "-x", "a/b", "a b"})
    void aBadNameExits65BeforeTheDirectoryIsTouched(String name) {
        Cli.Result r = lease("acquire", name, "--dir", "/proc/1/nonexistent/" + "x");
        assertThat(r.exit()).as(r.err()).isEqualTo(65);
        assertThat(lease("show", name, "--dir", dir()).exit()).isEqualTo(65);
        assertThat(Path.of(dir())).doesNotExist();
    }

    @Test
    void aRefusedAcquireSaysWhyOnStderrBesideTheRecordOnStdout() throws Exception {
        Process holder = children.sleeper();
        assertThat(lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder.pid())).exit()).isZero();
        Cli.Result held = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
        assertThat(held.exit()).isEqualTo(1);
        assertThat(held.out()).contains("\"verdict\"");
        assertThat(held.err().strip()).doesNotContain("\n").contains("is not granted", "held by pid " + holder.pid(), "alive");
    }

    @Test
    void noMalformedEndpointShowsItsPasswordAndAPortOutOfRangeIsUsage() {
        for (String bad : List.of("https://alice:S3cret PW@127.0.0.1:2379", "https://alice:S3cret#PW@127.0.0.1:2379",
                "https://alice:S3cret%PW@127.0.0.1:2379", "https://alice:S3cret@[::1")) {
            Cli.Result r = lease("show", "build", "--etcd", bad);
            assertThat(r.exit()).as(bad + ": " + r.err()).isEqualTo(64);
            assertThat(r.err()).as(bad).doesNotContain("S3cret").doesNotContain("PW");
        }
        Cli.Result port = lease("show", "build", "--etcd", "http://127.0.0.1:99999");
        assertThat(port.exit()).as(port.err()).isEqualTo(64);
        assertThat(port.err()).contains("out of range");
        Cli.Result noFile = lease("show", "build", "--etcd", "https://alice@127.0.0.1:2379", "--etcd-password-file",
                "/nonexistent/password");
        assertThat(noFile.exit()).as(noFile.err()).isEqualTo(64);
    }

    @Test
    void aScriptWhoseInterpreterIsMissingIs127AsShSaysIt() throws Exception {
        Path script = tmp.resolve("hook.sh");
        Files.writeString(script, "#!/nonexistent/interpreter\necho never\n");
        script.toFile().setExecutable(true);
        Cli.Result r = lease("run", "build", "--dir", dir(), "--", script.toString());
        assertThat(r.exit()).as(r.err()).isEqualTo(127);
        assertThat(Path.of(dir(), "build.lease")).as("nothing taken for a command that cannot run").doesNotExist();
    }

    @Test
    void breakRemovesACorruptRecordAndSaysWhatWasWrong() throws Exception {
        Files.createDirectories(Path.of(dir()));
        Path record = Path.of(dir(), "build.lease");
        Files.writeString(record, "{not json");
        Cli.Result r = lease("break", "build", "--dir", dir());
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out()).path("removed").asText())
                .contains("lease build");
        assertThat(r.err()).contains("cleared what could not be trusted in lease build");
        assertThat(record).doesNotExist();
        assertThat(lease("acquire", "build", "--dir", dir()).exit()).isZero();
        assertThat(lease("break", "never", "--dir", dir()).exit()).isEqualTo(3);
        assertThat(Path.of(dir(), "never.guard")).as("break of a name never taken leaves nothing behind").doesNotExist();
    }

    @Test
    void aLinkAtTheRecordNamesBreakAndBreakRemovesItWithoutNamingItself() throws Exception {
        Files.createDirectories(Path.of(dir()));
        Path target = Files.writeString(tmp.resolve("elsewhere"), "precious\n");
        Files.createSymbolicLink(Path.of(dir(), "build.lease"), target);
        Cli.Result shown = lease("show", "build", "--dir", dir());
        assertThat(shown.exit()).as(shown.err()).isEqualTo(65);
        assertThat(shown.err()).contains("a symbolic link stands where build.lease should be; break the lease to go on"
                + " (proclive lease break build), which removes it");
        Cli.Result broken = lease("break", "build", "--dir", dir());
        assertThat(broken.exit()).as(broken.err()).isZero();
        assertThat(broken.err()).contains("cleared what could not be trusted in lease build: lease build: a symbolic"
                + " link stands where build.lease should be").doesNotContain("break the lease");
        assertThat(Path.of(dir(), "build.lease")).doesNotExist();
        assertThat(Files.readString(target)).isEqualTo("precious\n");
    }

    @Test
    void aCommandClaimsWithoutNamingItsStoreAndNeverSeesAnOuterLeasesVariables() throws Exception {
        Path outer = tmp.resolve("outer");
        String claim = Cli.shellQuoted(Cli.command(Cli.jar(), "lease", "claim", "build", "--print", "fence"));
        String inner = Cli.shellQuoted(Cli.command(Cli.jar(), "lease", "run", "build", "--dir", dir(), "--", "sh", "-c",
                "echo \"dir=$PROCLIVE_LEASE_DIR etcd=${PROCLIVE_LEASE_ETCD-unset}\"; " + claim + "; echo \"claim=$?\""));
        List<String> run = Cli.command(Cli.jar(), "lease", "run", "outer", "--dir", outer.toString(), "--", "sh", "-c",
                inner);
        Cli.Result r = Cli.exec(run, "");
        assertThat(r.exit()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines.get(0)).as("the inner lease's store, not the outer's").isEqualTo("dir=" + dir() + " etcd=unset");
        assertThat(lines).as("its store found, its own lease granted again: %s", r.err()).contains("claim=0");
    }

    @Test
    void aGuardPastAFencesRangeNamesBreakWhichClearsItAndFencesGoOnAboveTheRecords() throws Exception {
        long holder = children.sleeper().pid();
        for (int i = 0; i < 3; i++) { // fence 3 released: the record proves it
            Cli.Result r = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder));
            assertThat(lease("release", "build", "--dir", dir(), "--fence", json(r).path("fence").asText()).exit()).isZero();
        }
        Path guard = Path.of(dir(), "build.guard");
        Files.writeString(guard, "99999999999999999999"); // past 2^63 - 1
        Cli.Result refused = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder));
        assertThat(refused.exit()).as(refused.err()).isEqualTo(65);
        assertThat(refused.err()).contains("the guard holds", "proclive lease break build");
        Cli.Result show = lease("show", "build", "--dir", dir());
        assertThat(show.exit()).as("show judges as acquire does: %s", show.err()).isEqualTo(65);
        Cli.Result broken = lease("break", "build", "--dir", dir());
        assertThat(broken.exit()).as(broken.err()).isZero();
        assertThat(Files.readString(guard).strip()).as("the fence the record proves").isEqualTo("3");
        Cli.Result next = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder));
        assertThat(next.exit()).as(next.err()).isZero();
        assertThat(json(next).path("fence").asLong()).as("above every fence granted before").isEqualTo(4);
    }

    @Test
    void aGuardPastAFencesRangeWithoutARecordIsClearedByBreakToo() throws Exception {
        Files.createDirectories(Path.of(dir()));
        Files.writeString(Path.of(dir(), "build.guard"), "garbage");
        Cli.Result broken = lease("break", "build", "--dir", dir());
        assertThat(broken.exit()).as("not 'no record': %s", broken.err()).isZero();
        assertThat(broken.err()).contains("cleared what could not be trusted in lease build", "the guard holds");
        assertThat(lease("acquire", "build", "--dir", dir()).exit()).isZero();
    }

    @Test
    void showJudgesARolledBackRecordAsAcquireDoes() throws Exception {
        long holder = children.sleeper().pid();
        Cli.Result first = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder));
        String old = Files.readString(Path.of(dir(), "build.lease"));
        assertThat(lease("release", "build", "--dir", dir(), "--fence", json(first).path("fence").asText()).exit()).isZero();
        assertThat(lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(holder)).exit()).isZero();
        Files.writeString(Path.of(dir(), "build.lease"), old); // fence 1, held, under a guard of 2: restored from a copy
        Cli.Result acquire = lease("acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()));
        assertThat(acquire.exit()).as(acquire.err()).isEqualTo(65);
        Cli.Result show = lease("show", "build", "--dir", dir());
        assertThat(show.exit()).as("never shown as a valid holder: %s %s", show.out(), show.err()).isEqualTo(65);
        assertThat(show.err()).contains("rolled back");
    }

    @Test
    void aCorruptRecordExits65AndIsLeftAloneBeforeAnyHolderIsLookedFor() throws Exception {
        Files.createDirectories(Path.of(dir()));
        Path record = Path.of(dir(), "build.lease");
        Files.writeString(record, "{not json");
        for (String[] args : new String[][] {{"acquire", "build", "--dir", dir()},
            {"acquire", "build", "--dir", dir(), "--holder", "999999999"}, {"show", "build", "--dir", dir()},
            {"release", "build", "--dir", dir(), "--fence", "1"}}) {
            Cli.Result r = lease(args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(65);
            assertThat(r.err().strip()).doesNotContain("\n");
        }
        assertThat(Files.readString(record)).isEqualTo("{not json");
        Files.delete(record);
        Files.createSymbolicLink(record, tmp.resolve("target"));
        assertThat(lease("acquire", "build", "--dir", dir()).exit()).isEqualTo(65);
        assertThat(Files.isSymbolicLink(record)).isTrue();
    }

    @Test
    void aDirectoryThatCannotBeMadeExits74() throws Exception {
        Path file = tmp.resolve("a-file");
        Files.writeString(file, "x");
        Cli.Result r = lease("acquire", "build", "--dir", file.resolve("leases").toString());
        assertThat(r.exit()).as(r.err()).isEqualTo(74);
        assertThat(r.err().strip()).doesNotContain("\n");
    }

    /** {@code lease acquire build --dir RO ARGS} as nobody, RO a directory nobody can read but not write. */
    private Cli.Result acquireAsNobodyInAReadOnlyDirectory(Path leases, String... args) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run the CLI as nobody");
        Path jar = Cli.worldReadableCopy(tmp);
        Files.createDirectories(leases);
        leases.toFile().setReadable(true, false);
        leases.toFile().setExecutable(true, false);
        tmp.toFile().setExecutable(true, false);
        List<String> command = new ArrayList<>(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
        command.addAll(Cli.command(jar, "lease", "acquire", "build", "--dir", leases.toString()));
        command.addAll(List.of(args));
        return Cli.exec(command, "");
    }

    @Test
    void aDirectoryThatCannotBeWrittenExits74AndChangesNothing() throws Exception {
        Path leases = tmp.resolve("ro");
        Cli.Result r = acquireAsNobodyInAReadOnlyDirectory(leases);
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(74);
        try (var files = Files.list(leases)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void aMissingDirectoryIsAnIoFailureExceptForTheActionsThatCreateIt() throws Exception {
        String missing = tmp.resolve("nonexistent").resolve("y").toString();
        for (String[] args : new String[][] {{"show", "x", "--dir", missing}, {"break", "x", "--dir", missing},
            {"renew", "x", "--dir", missing, "--fence", "1"}, {"release", "x", "--dir", missing, "--fence", "1"}}) {
            Cli.Result r = lease(args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(74);
            assertThat(r.err().strip()).doesNotContain("\n").contains("no such lease directory")
                    .as("no Java type name").doesNotContain("NoSuchFile").doesNotContain("Exception");
        }
        assertThat(Path.of(missing)).doesNotExist();
        Cli.Result acquired = lease("acquire", "x", "--dir", missing);
        assertThat(acquired.exit()).as(acquired.err()).isZero();
        assertThat(Path.of(missing)).isDirectory();
    }

    @Test
    void underAPosixLocaleJsonIsUtf8AndAPathThatCannotBeIsBadUsage() throws Exception {
        // A process named slëep, made and run through sh so that the name is bytes whatever the locale.
        Process named = new ProcessBuilder("sh", "-c", "n=\"$1/$(printf 'sl\\303\\253ep')\"; cp /bin/sleep \"$n\" && exec \"$n\" 60",
                "sh", tmp.toString()).start();
        children.adopt(named);
        Eventually.until("the copy of sleep runs", java.time.Duration.ofSeconds(10), () -> Files.readString(
                Path.of("/proc/" + named.pid() + "/comm"), java.nio.charset.StandardCharsets.UTF_8).startsWith("sl"));
        List<String> identify = new ArrayList<>(List.of("env", "LC_ALL=POSIX", "LANG=POSIX"));
        identify.addAll(Cli.command(Cli.jar(), "identify", Long.toString(named.pid())));
        Cli.Result r = Cli.exec(identify, "");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("\"name\":\"sl\u00ebep\"");

        String quoted = Cli.shellQuoted(Cli.command(Cli.jar(), "lease", "acquire", "b", "--dir"));
        Cli.Result path = Cli.exec(List.of("env", "LC_ALL=POSIX", "LANG=POSIX", "sh", "-c",
                quoted + " \"$1/$(printf 'nc-\\303\\251')\"", "sh", tmp.toString()), "");
        assertThat(path.exit()).as(path.err()).isEqualTo(64);
        assertThat(path.err().strip()).doesNotContain("\n").doesNotContain("Exception").startsWith("proclive: ");
    }

    @Test
    void theDirectoryIsSaidBeforeADeadHolder() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        assertThat(gone.waitFor(10, TimeUnit.SECONDS)).isTrue();
        Cli.Result r = acquireAsNobodyInAReadOnlyDirectory(tmp.resolve("ro"), "--holder", Long.toString(gone.pid()));
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(74);
    }

    @Test
    void aRenewalFromTheCliKeepsTheTtlTheHolderPromised() throws Exception {
        String pid = Long.toString(children.sleeper().pid());
        assertThat(lease("acquire", "build", "--dir", dir(), "--holder", pid, "--ttl", "600").exit()).isZero();
        Cli.Result renewed = lease("renew", "build", "--dir", dir(), "--fence", "1");
        assertThat(renewed.exit()).as(renewed.err()).isZero();
        assertThat(json(renewed).path("ttlMillis").asLong()).isEqualTo(600_000);
        Cli.Result shorter = lease("renew", "build", "--dir", dir(), "--fence", "1", "--ttl", "45");
        assertThat(json(shorter).path("ttlMillis").asLong()).isEqualTo(45_000);
    }

    @Test
    void theWholeFenceRangeIsAcceptedOnTheCommandLine() throws Exception {
        String pid = Long.toString(children.sleeper().pid());
        Files.createDirectories(Path.of(dir()));
        Files.writeString(Path.of(dir(), "build.guard"), "999999999999999999"); // 10^18 - 1
        Cli.Result granted = lease("acquire", "build", "--dir", dir(), "--holder", pid);
        assertThat(json(granted).path("fence").asLong()).isEqualTo(1_000_000_000_000_000_000L);
        assertThat(lease("renew", "build", "--dir", dir(), "--fence", "1000000000000000000").exit()).isZero();
        assertThat(lease("release", "build", "--dir", dir(), "--fence", "9223372036854775807").exit()).isEqualTo(1);
        assertThat(lease("release", "build", "--dir", dir(), "--fence", "1000000000000000000").exit()).isZero();
        Files.writeString(Path.of(dir(), "build.guard"), "9223372036854775807");
        Cli.Result exhausted = lease("acquire", "build", "--dir", dir(), "--holder", pid);
        assertThat(exhausted.exit()).as(exhausted.err()).isEqualTo(65);
        assertThat(exhausted.err()).contains("last fence");
        assertThat(Files.readString(Path.of(dir(), "build.guard"))).isEqualTo("9223372036854775807");
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"renewedAt\":\"+1000000000-12-31T23:59:59.999Z\"", "TRAILING",
            "\"state\":\"held\\nproclive: granted\""})
    void aRecordThatCannotBeTrustedExits65OnOneLineWhateverItHolds(String change) throws Exception {
        Process holder = children.sleeper();
        Files.createDirectories(Path.of(dir()));
        String json = "{\"name\":\"build\",\"fence\":3,\"state\":\"held\",\"holder\":{\"pid\":" + holder.pid()
                + ",\"start\":\"1\",\"host\":\"elsewhere\"},\"writer\":{\"pid\":1,\"start\":\"1\"},"
                + "\"acquiredAt\":\"2026-11-29T10:00:00.000Z\",\"renewedAt\":\"2026-11-29T10:00:00.000Z\",\"ttlMillis\":1}";
        json = change.equals("TRAILING") ? json + " }{\"fence\":99, garbage"
                : json.replaceFirst(change.startsWith("\"state") ? "\"state\":\"held\"" : "\"renewedAt\":\"[^\"]*\"",
                        java.util.regex.Matcher.quoteReplacement(change));
        Path record = Path.of(dir(), "build.lease");
        Files.writeString(record, json);
        for (String[] args : new String[][] {{"show", "build", "--dir", dir()},
            {"acquire", "build", "--dir", dir(), "--take-unknown", "--holder", Long.toString(holder.pid())},
            {"renew", "build", "--dir", dir(), "--fence", "3"}}) {
            Cli.Result r = lease(args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(65);
            assertThat(r.err().strip()).doesNotContain("\n").doesNotContain("Exception").startsWith("proclive: ");
            assertThat(r.out()).isEmpty();
        }
        assertThat(Files.readString(record)).isEqualTo(json);
    }

    @Test
    void aHookTakesTheLeaseForItsOwnerThroughAShebangScript() throws Exception {
        Path hook = tmp.resolve("hook.sh");
        String cli = Cli.shellQuoted(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir()));
        Files.writeString(hook, "#!/bin/sh\n" + cli + "\nstatus=$?\nexit $status\n");
        hook.toFile().setExecutable(true);
        Cli.Result r = Cli.exec(List.of(hook.toString()), "");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(json(r).path("holder").path("pid").asLong()).isEqualTo(ProcessHandle.current().pid());
    }

    @Test
    void aHiddenHolderIsUndecidedNeverTakenOver() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to mount a hidepid /proc and run as nobody");
        Path jar = Cli.worldReadableCopy(tmp);
        Path leases = tmp.resolve("shared");
        Files.createDirectories(leases);
        for (Path p : List.of(tmp, leases)) {
            p.toFile().setReadable(true, false);
            p.toFile().setWritable(true, false);
            p.toFile().setExecutable(true, false);
        }
        long rootsHolder = children.sleeper().pid();
        String script = "umask 000; " + Cli.shellQuoted(Cli.command(jar, "lease", "acquire", "build", "--dir",
                leases.toString(), "--holder", Long.toString(rootsHolder)));
        Cli.Result granted = Cli.exec(List.of("sh", "-c", script), "");
        assertThat(granted.exit()).as(granted.err()).isZero();

        String asNobody = "sleep 120 & P=$!; " + Cli.shellQuoted(Cli.command(jar, "lease", "acquire", "build",
                "--dir", leases.toString(), "--holder", "PID")) + "; echo exit=$?; kill $P";
        String mount = "mount -t proc -o hidepid=invisible proc /proc && exec setpriv --reuid=65534 --regid=65534"
                + " --clear-groups sh -c '" + asNobody.replace("'PID'", "$P").replace("'", "'\\''") + "'";
        Cli.Result r = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", mount), "");
        assertThat(r.out()).as(r.err()).contains("exit=2", "\"reason\":\"access_denied\"");
        LeaseRecord record = dev.proclive.lease.LeaseStore.open(leases).read("build").orElseThrow();
        assertThat(record.holder().pid()).isEqualTo(rootsHolder);
        assertThat(record.fence()).isEqualTo(1);
    }
}
