package dev.proclive.cli;

import dev.proclive.Eventually;
import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The command line through the built jar: output, exit codes, and one clear line for bad input. */
class CliIT {

    final ObjectMapper mapper = new ObjectMapper();

    private static void assertOneCleanErrorLine(Cli.Result r) {
        assertThat(r.out()).isEmpty();
        assertThat(r.err().strip()).startsWith("proclive: ").doesNotContain("\n")
                .doesNotContain("Exception").doesNotContain("\tat ");
    }

    @Test
    void helpPrintsUsage() {
        Cli.Result r = Cli.run("--help");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("owner [--skip NAME]", "identify PID", "check [JSON]", "demo");
    }

    @Test
    void helpOnACommandPrintsThatCommandsUsage() {
        for (String[] args : new String[][] {{"lease", "--help"}, {"owner", "--help"}, {"check", "--help"},
                {"lease", "acquire", "--help"}, {"lease", "run", "build", "--dir", "d", "--help"}, {"wait", "-h"},
                {"identify", "--help"}}) {
            Cli.Result r = Cli.run(args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isZero();
            assertThat(r.out()).startsWith("usage: proclive " + args[0]);
            assertThat(r.err()).isEmpty();
        }
        assertThat(Cli.run("lease", "--help").out()).contains("acquire", "run", "claim", "--print fence");
        Cli.Result passedOn = Cli.run("lease", "run", "x", "--dir", "/proc/1/nonexistent/leases", "--", "cmd", "--help");
        assertThat(passedOn.out()).as("after --, --help is the command's").doesNotStartWith("usage:");
    }

    @Test
    void eachLeaseActionsHelpIsItsOwnMadeFromItsOptions() {
        java.util.Map<String, java.util.List<String>> options = java.util.Map.of(
                "acquire", java.util.List.of("--holder", "--skip", "--ttl", "--take-unknown", "--wait", "--print"),
                "run", java.util.List.of("--ttl", "--wait", "--take-unknown", "COMMAND [ARG]..."),
                "claim", java.util.List.of("--holder", "--skip", "--print"),
                "renew", java.util.List.of("--fence", "--ttl"),
                "release", java.util.List.of("--fence"),
                "show", java.util.List.of("--print"),
                "break", java.util.List.of("--prefix"),
                "keep", java.util.List.of("--etcd", "--prefix"));
        java.util.Set<String> texts = new java.util.HashSet<>();
        for (var e : options.entrySet()) {
            Cli.Result r = Cli.run("lease", e.getKey(), "--help");
            assertThat(r.exit()).as(e.getKey()).isZero();
            assertThat(r.out()).as(e.getKey()).startsWith("usage: proclive lease " + e.getKey()).contains(e.getValue())
                    .contains("exit:");
            assertThat(r.out().lines()).as(e.getKey() + ": lines of at most 80 columns").allMatch(l -> l.length() <= 80);
            texts.add(r.out());
        }
        assertThat(texts).as("one text per action").hasSize(options.size());
        assertThat(Cli.run("lease", "release", "--help").out()).doesNotContain("--holder", "--ttl");
        for (String needsFence : new String[] {"renew", "release"}) {
            String usage = Cli.run("lease", needsFence, "--help").out();
            assertThat(usage).as("it needs the fence: no brackets").contains(" --fence N").doesNotContain("[--fence N]");
        }
        assertThat(Cli.run("lease", "show", "--help").out()).doesNotContain("made if missing");
        assertThat(Cli.run("lease", "keep", "--help").out()).doesNotContain("NAME (", "--dir DIR");
    }

    @Test
    void anOptionACommandDoesNotHaveIsUsageNotBadJson() {
        for (String[] args : new String[][] {{"check", "--bogus"}, {"ancestor", "--bogus"}, {"check", "-x"}}) {
            Cli.Result r = Cli.run(args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(64);
            assertThat(r.err()).contains("unknown option " + args[1]);
        }
    }

    @Test
    void versionPrintsTheProjectVersion() {
        Cli.Result r = Cli.run("--version");
        assertThat(r.exit()).isZero();
        assertThat(r.line()).matches("proclive \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?");
    }

    @Test
    void badUsageExits64() {
        for (String[] args : new String[][] {{}, {"frobnicate"}, {"identify"}, {"identify", "1", "2"},
                {"owner", "--skip"}, {"owner", "--bogus"}, {"check", "{}", "{}"}, {"demo", "now"}}) {
            Cli.Result r = Cli.run(args);
            assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(64);
            assertOneCleanErrorLine(r);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "1.5", "99999999999999999999", "", "0x10", "1e3"})
    void aPidThatIsNotA64BitWholeNumberExits65(String pid) {
        Cli.Result r = Cli.run("identify", pid);
        assertThat(r.exit()).isEqualTo(65);
        assertOneCleanErrorLine(r);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "not json", "{\"pid\":", "{\"pid\":1.5}", "{\"pid\":\"12\"}",
            "{\"pid\":99999999999999999999}", "null", "[1]", "{\"pid\":1} {\"pid\":2}"})
    void badIdentityJsonOnStdinExits65(String json) {
        Cli.Result r = Cli.runWithStdin(json, "check");
        assertThat(r.exit()).as(json).isEqualTo(65);
        assertOneCleanErrorLine(r);
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"pid\":1,\"start\":true}", "{\"pid\":1,\"start\":18}", "{\"pid\":1,\"boot\":5}",
            "{\"pid\":1,\"name\":123}", "{\"pid\":1,\"pidns\":4026531836}", "{\"pid\":1,\"host\":[\"h\"]}",
            "{\"pid\":1,\"start\":{}}"})
    void aFieldThatIsNotAStringExits65NotCoerced(String json) {
        Cli.Result r = Cli.runWithStdin(json, "check");
        assertThat(r.exit()).as(json).isEqualTo(65);
        assertOneCleanErrorLine(r);
        assertThat(r.err()).contains("must be a JSON string");
    }

    @Test
    void aStartThisPlatformNeverWritesIsUnknownNeverDead() {
        for (String start : new String[] {"abc", "12.5", "-1", "1e3", "99999999999999999999"}) {
            Cli.Result r = Cli.run("check", "{\"pid\":1,\"start\":\"" + start + "\"}");
            assertThat(r.line()).as(start).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"no_fingerprint\"}");
            assertThat(r.exit()).as(start).isEqualTo(2);
        }
        Cli.Result reused = Cli.run("check", "{\"pid\":1,\"start\":\"1\"}");
        assertThat(reused.line()).as("a tick count that is not pid 1's start still proves reuse")
                .isEqualTo("{\"liveness\":\"dead\",\"reason\":\"pid_reused\"}");
    }

    @Test
    void aFieldGivenTwiceIsBadInputNeverTheLastOneWins() {
        String live = Long.toString(ProcessHandle.current().pid());
        for (String json : new String[] {"{\"pid\":999999999,\"pid\":" + live + "}",
            "{\"pid\":" + live + ",\"start\":\"1\",\"start\":\"2\"}"}) {
            Cli.Result r = Cli.run("check", json);
            assertThat(r.exit()).as(json).isEqualTo(65);
            assertThat(r.err()).as(json).contains("Duplicate field");
            assertThat(r.out()).isEmpty();
        }
    }

    @Test
    void waitSaysANonChildWasKilledBySigkill() throws Exception {
        assumeTrue(dev.proclive.Kernel.tellsExitStatus(), dev.proclive.Kernel.NO_EXIT_STATUS);
        // Its parent ignores SIGCHLD, so the kernel reaps it as it ends: its status is there at once, whenever
        // the parent runs next (a parent that reaps it itself may not run within the watch's grace on a busy
        // machine, and the end is then a zombie's, with no status). Stopped, the parent cannot run at all.
        Process shell = new ProcessBuilder("sh", "-c", "sleep 60 & echo $!; exec env --ignore-signal=CHLD sleep 120").start();
        try {
            long pid = Long.parseLong(new java.io.BufferedReader(new java.io.InputStreamReader(shell.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8)).readLine().strip());
            Eventually.until("the parent ignores SIGCHLD", Duration.ofSeconds(60), () -> ignoresSigchld(shell.pid()));
            Runtime.getRuntime().exec(new String[] {"kill", "-STOP", Long.toString(shell.pid())}).waitFor();
            String id = mapper.writeValueAsString(ProcLive.identify(pid).orElseThrow());
            Process waiting = new ProcessBuilder(Cli.command(Cli.jar(), "wait", id, "--timeout", "60")).start();
            java.io.BufferedReader said = new java.io.BufferedReader(new java.io.InputStreamReader(waiting.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8));
            watching(waiting); // killed once the wait watches it: its pidfd open before the end
            Runtime.getRuntime().exec(new String[] {"kill", "-KILL", Long.toString(pid)}).waitFor();
            assertThat(waiting.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(mapper.readTree(said.readLine())).isEqualTo(mapper.readTree("{\"liveness\":\"dead\",\"reason\":"
                    + "\"exited\",\"exit\":{\"signal\":9,\"signalName\":\"SIGKILL\",\"coreDumped\":false}}"));
            assertThat(waiting.exitValue()).isZero();
        } finally {
            shell.destroyForcibly();
        }
    }

    /** Whether process {@code pid} ignores SIGCHLD (17: bit 16 of its {@code SigIgn} mask). */
    private static boolean ignoresSigchld(long pid) throws java.io.IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).strip(), 16) & (1L << 16)) != 0;
            }
        }
        return false;
    }

    /** Waits until {@code proclive wait} in {@code p} watches: its exit-watch thread exists (its pidfd is open then). */
    private static void watching(Process p) throws Exception {
        Eventually.until("the wait watches", Duration.ofSeconds(60),
                () -> Files.list(Path.of("/proc", Long.toString(p.pid()), "task")).anyMatch(t -> {
                    try {
                        return Files.readString(t.resolve("comm")).strip().equals("proclive-exit-w");
                    } catch (java.io.IOException gone) {
                        return false;
                    }
                }));
    }

    @Test
    void waitTellsTheEndAliveAtTheTimeoutOrUnknownAtOnce() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            String id = mapper.writeValueAsString(ProcLive.identify(sleeper.pid()).orElseThrow());
            Cli.Result alive = Cli.run("wait", id, "--timeout", "0.3");
            assertThat(alive.line()).as(alive.err()).isEqualTo("{\"liveness\":\"alive\",\"reason\":\"matched\"}");
            assertThat(alive.exit()).isEqualTo(1);

            Process waiting = new ProcessBuilder(Cli.command(Cli.jar(), "wait", "--timeout=60")).start();
            waiting.getOutputStream().write(id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            waiting.getOutputStream().close();
            watching(waiting); // the JVM has started and watches
            sleeper.destroyForcibly();
            assertThat(waiting.waitFor(60, TimeUnit.SECONDS)).isTrue();
            Cli.Result dead = new Cli.Result(waiting.exitValue(), new String(waiting.getInputStream().readAllBytes(),
                    java.nio.charset.StandardCharsets.UTF_8), new String(waiting.getErrorStream().readAllBytes(),
                    java.nio.charset.StandardCharsets.UTF_8));
            assertThat(dead.line()).as(dead.err()).matches("\\{\"liveness\":\"dead\",\"reason\":\"(exited|zombie)\""
                    + "(,\"exit\":\\{\"signal\":9,\"signalName\":\"SIGKILL\",\"coreDumped\":false})?}");
            assertThat(dead.exit()).isZero();
        } finally {
            sleeper.destroyForcibly();
        }
        Cli.Result elsewhere = Cli.run("wait", "{\"pid\":1,\"start\":\"1\",\"host\":\"another-host\"}");
        assertThat(elsewhere.line()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_host\"}");
        assertThat(elsewhere.exit()).isEqualTo(2);
        for (String[] args : new String[][] {{"wait", "{}", "--timeout", "abc"}, {"wait", "{}", "--timeout", "-1"},
                {"wait", "{}", "--timeout"}, {"wait", "{}", "{}"}, {"wait", "{}", "--timeout", "1", "--timeout", "2"},
                {"wait", "--frob"}}) {
            Cli.Result r = Cli.run(args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(64);
        }
        assertThat(Cli.runWithStdin("{\"pid\":\"x\"", "wait").exit()).isEqualTo(65);
        assertThat(Cli.runWithStdin("garbage", "wait", "--timeout", "1").exit()).isEqualTo(65);
    }

    @Test
    void bytesThatAreNotUtf8Exit65() {
        byte[] json = "{\"pid\":1,\"start\":\"1\",\"name\":\"caf\u00e9\"}".getBytes(StandardCharsets.ISO_8859_1);
        Cli.Result r = Cli.exec(Cli.command(Cli.jar(), "check"), json, Map.of());
        assertThat(r.exit()).isEqualTo(65);
        assertOneCleanErrorLine(r);
        assertThat(r.err()).contains("UTF-8");
    }

    @Test
    void endlessInputIsRefusedAfterOneMebibyte() {
        byte[] zeros = new byte[(1 << 20) + 4096];
        Cli.Result r = Cli.exec(Cli.command(Cli.jar(), "check"), zeros, Map.of());
        assertThat(r.exit()).isEqualTo(65);
        assertOneCleanErrorLine(r);
        assertThat(r.err()).contains("more than 1048576 bytes");
        byte[] padded = new byte[(1 << 20) - 10];
        Arrays.fill(padded, (byte) ' ');
        byte[] id = "{\"pid\":0}".getBytes(StandardCharsets.UTF_8);
        System.arraycopy(id, 0, padded, 0, id.length);
        assertThat(Cli.exec(Cli.command(Cli.jar(), "check"), padded, Map.of()).exit()).as("just under 1 MiB").isEqualTo(2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"+1", "\u0661", "\uff11", " 1", "1 ", "-", "--1"})
    void aPidIsAsciiDigitsOnly(String pid) {
        Cli.Result r = Cli.run("identify", pid);
        assertThat(r.exit()).as(pid).isEqualTo(65);
        assertOneCleanErrorLine(r);
    }

    @Test
    void aNegativePidIsAPidThatIsNotFound() {
        Cli.Result r = Cli.run("identify", "-5");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.err()).isEqualTo("proclive: no identity could be determined: no process has pid -5\n");
    }

    @Test
    void anIdentityThatCannotBeDeterminedSaysWhy() throws Exception {
        String none = Long.toString(Long.MAX_VALUE); // above any pid_max
        Cli.Result r = Cli.run("identify", none);
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.err()).startsWith("proclive: no identity could be determined: ").contains(none);
        assertOneCleanErrorLine(r);
    }

    @Test
    void helpAndVersionTakeNoArguments() {
        for (String[] args : new String[][] {{"--version", "extra"}, {"--help", "x"}, {"-h", "x"}}) {
            Cli.Result r = Cli.run(args);
            assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(64);
            assertOneCleanErrorLine(r);
        }
    }

    @Test
    void aBadPidErrorSaysWhatIsWrong() {
        assertThat(Cli.runWithStdin("{\"pid\":1.5}", "check").err()).contains("\"pid\" must be a whole number");
    }

    @Test
    void anOwnerThatCannotBeFoundPointsToTheTrace() {
        Cli.Result r = Cli.run("owner", "--of", "999999999");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains("no owner could be determined").contains("owner --trace");
    }

    @Test
    void anOwnerThatCannotBeFoundIsWordedOneWayTracedOrNot() {
        Cli.Result plain = Cli.run("owner", "--of", "999999999");
        Cli.Result traced = Cli.run("owner", "--of", "999999999", "--trace");
        assertThat(traced.exit()).isEqualTo(plain.exit()).isEqualTo(3);
        String[] said = traced.err().split("\n");
        assertThat(said[said.length - 1]).isEqualTo("proclive: no owner could be determined");
        assertThat(plain.err()).startsWith("proclive: no owner could be determined (");
    }

    @Test
    void aLeaseUsageErrorPointsToItsActionsHelpAndAMissingDashDashIsHinted(@org.junit.jupiter.api.io.TempDir Path tmp) {
        String dir = tmp.resolve("leases").toString();
        Cli.Result run = Cli.run("lease", "run", "build", "--dir", dir, "sleep", "1");
        assertThat(run.exit()).isEqualTo(64);
        assertThat(run.err()).isEqualTo("proclive: lease run takes one NAME, got another: sleep; did you mean: lease run build"
                + " -- sleep 1? (see proclive lease run --help)\n");
        assertThat(tmp.resolve("leases")).as("nothing made").doesNotExist();
        Cli.Result acquire = Cli.run("lease", "acquire", "build", "--dir", dir, "--wait", "x");
        assertThat(acquire.exit()).isEqualTo(64);
        assertThat(acquire.err()).endsWith(" (see proclive lease acquire --help)\n");
        assertThat(Cli.run("lease", "frob").err()).endsWith(" (see proclive lease --help)\n");
    }

    @Test
    void helpSaysWhatBreakWritesAndEveryOptionOfRun() {
        assertThat(Cli.run("lease", "break", "--help").out()).contains("record says released, with ended.how broken")
                .doesNotContain("record says broken");
        assertThat(Cli.run("--help").out()).contains("run [--wait SECONDS] [--ttl SECONDS] [--take-unknown] [--on-lost term|warn]")
                .contains("the record (break: released, ended.how broken, fence");
    }

    @Test
    void noIdentityExits3() {
        Cli.Result r = Cli.run("identify", "0");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.out()).isEmpty();
    }

    @Test
    void anotherHostIsUnknownAndExits2() {
        Cli.Result r = Cli.runWithStdin("{\"pid\":1,\"start\":\"1\",\"host\":\"no-such-host.invalid\"}", "check");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.line()).isIn("{\"liveness\":\"unknown\",\"reason\":\"other_host\"}",
                "{\"liveness\":\"unknown\",\"reason\":\"unsupported_platform\"}");
    }

    @Test
    void noPidIsUnknownNoIdentity() {
        Cli.Result r = Cli.runWithStdin("{\"start\":\"1\",\"future\":true}", "check");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.line()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"no_identity\"}");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void identifyThenCheckAliveThenDead() throws Exception {
        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            Cli.Result identified = Cli.run("identify", Long.toString(sleeper.pid()));
            assertThat(identified.exit()).isZero();
            Identity id = mapper.readValue(identified.line(), Identity.class);
            assertThat(id.pid()).isEqualTo(sleeper.pid());
            assertThat(id.name()).isEqualTo("sleep");

            Cli.Result alive = Cli.run("check", identified.line());
            assertThat(alive.exit()).isZero();
            assertThat(alive.line()).isEqualTo("{\"liveness\":\"alive\",\"reason\":\"matched\"}");
            assertThat(Cli.runWithStdin(identified.line(), "check").exit()).isZero();

            sleeper.destroyForcibly();
            sleeper.waitFor(10, TimeUnit.SECONDS);
            Cli.Result dead = Cli.runWithStdin(identified.line(), "check");
            assertThat(dead.exit()).isEqualTo(1);
            assertThat(dead.line()).isEqualTo("{\"liveness\":\"dead\",\"reason\":\"exited\"}");
        } finally {
            sleeper.destroyForcibly();
        }
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void ownerPrintsOneIdentityLine() throws Exception {
        Cli.Result r = Cli.run("owner");
        assertThat(r.exit()).isZero();
        Identity owner = mapper.readValue(r.line(), Identity.class);
        assertThat(owner.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(r.out().strip()).doesNotContain("\n");
    }

    @Test
    @DisabledOnOs(OS.WINDOWS) // a JSON argument's quotes do not survive Windows command lines
    void checkTakesTheIdentityAsAnArgument() {
        Cli.Result r = Cli.run("check", "{\"pid\":0}");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.line()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"no_identity\"}");
        assertThat(Cli.run("check", "{oops").exit()).isEqualTo(65);
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void demoTellsTheWholeStory() {
        Cli.Result r = Cli.run("demo");
        assertThat(r.exit()).isZero();
        assertThat(section(r.out(), "1. ")).contains("why: ", "recorded: {", "-> alive (matched)");
        assertThat(section(r.out(), "2. ")).contains("-> alive (matched)", "-> dead (exited)");
        assertThat(section(r.out(), "3. ")).contains("-> dead (zombie)");
        assertThat(section(r.out(), "4. ")).contains("dead (pid_reused)");
        assertThat(section(r.out(), "5. ")).contains("-> unknown (other_host)");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void demoReusesAPidForRealAsRootAndSaysWhenItIsSimulated() {
        String section = section(Cli.run("demo").out(), "4. ");
        if ("root".equals(System.getProperty("user.name"))) {
            assertThat(section).contains("REAL, in a fresh PID namespace").doesNotContain("SIMULATED");
        } else {
            assertThat(section).contains("SIMULATED (a real reuse needs root");
        }
    }

    /** Every section prints its title and at least one line, whatever the OS can show. */
    @Test
    void demoRunsEverywhere() {
        Cli.Result r = Cli.run("demo");
        assertThat(r.exit()).isZero();
        for (String number : new String[] {"1. ", "2. ", "3. ", "4. ", "5. "}) {
            assertThat(section(r.out(), number)).as("section %s", number).contains("\n   ");
        }
        assertThat(section(r.out(), "5. ")).containsAnyOf("-> unknown (other_host)", "-> unknown (unsupported_platform)");
        assertThat(r.out()).contains("UNKNOWN is an answer too");
        assertThat(r.err()).doesNotContain("Exception");
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void theCliSpeaksAsciiUnderAPosixLocale() {
        for (String[] args : new String[][] {{"demo"}, {"--help"}, {"owner", "--trace"}}) {
            Cli.Result r = Cli.exec(Cli.command(Cli.jar(), args), new byte[0], Map.of("LC_ALL", "POSIX", "LANG", "C"));
            // A character the locale cannot show prints as '?': the only one allowed is the title's.
            assertThat((r.out() + r.err()).replace("still alive?", "")).as(String.join(" ", args)).doesNotContain("?");
        }
    }

    /** The lines of demo section {@code number}, from its title to the next blank line. */
    private static String section(String out, String number) {
        int start = out.indexOf("\n" + number);
        assertThat(start).as("section %s in:%n%s", number, out).isNotNegative();
        int end = out.indexOf("\n\n", start + 1);
        return out.substring(start + 1, end < 0 ? out.length() : end);
    }

    @Test
    void anArgumentInUtf8IsReadAsUtf8UnderAPosixLocale(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path id = dir.resolve("id.json");
        java.nio.file.Files.write(id, "{\"pid\":1,\"start\":\"1\",\"host\":\"elsewhere\",\"name\":\"caf\u00e9 \u4e16\"}"
                .getBytes(StandardCharsets.UTF_8));
        java.util.List<String> check = new java.util.ArrayList<>(Cli.command(Cli.jar(), "check"));
        // the bytes go through a shell, as README's `check "$(cat id.json)"` does: never through this JVM's encoder
        String script = Cli.shellQuoted(check) + " \"$(cat " + Cli.shellQuoted(java.util.List.of(id.toString())) + ")\"";
        for (String locale : java.util.List.of("POSIX", "C")) {
            Cli.Result r = Cli.exec(java.util.List.of("sh", "-c", script), new byte[0],
                    java.util.Map.of("LC_ALL", locale, "LANG", locale));
            assertThat(r.err()).as(locale).isEmpty();
            assertThat(r.out()).as(locale).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_host\"}\n");
            assertThat(r.exit()).isEqualTo(2);
        }
    }

    @Test
    void argumentsAreReadAgainFromCmdlineOnlyWhenTheyLineUp(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path cmdline = dir.resolve("cmdline");
        byte[] cafe = "caf\u00e9".getBytes(StandardCharsets.UTF_8);
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        b.write("java\0-cp\0x.jar\0Main\0check\0".getBytes(StandardCharsets.US_ASCII));
        b.write(cafe);
        b.write(0);
        java.nio.file.Files.write(cmdline, b.toByteArray());
        java.nio.charset.Charset posix = StandardCharsets.US_ASCII;
        String lost = new String(cafe, posix); // what a POSIX locale's JVM makes of it: "caf" and two U+FFFD
        String[] args = {"check", lost};
        assertThat(Console.utf8Arguments(args, cmdline.toString(), posix)).containsExactly("check", "caf\u00e9");
        assertThat(Console.utf8Arguments(new String[] {"check", "plain"}, cmdline.toString(), posix))
                .as("nothing lost: not read").containsExactly("check", "plain");
        assertThat(Console.utf8Arguments(new String[] {"other", lost}, cmdline.toString(), posix))
                .as("not these arguments").containsExactly("other", lost);
        assertThat(Console.utf8Arguments(new String[] {"x", "check", lost}, cmdline.toString(), posix))
                .as("main's arguments are the last ones").containsExactly("x", "check", lost);
        assertThat(Console.utf8Arguments(args, dir.resolve("none").toString(), posix)).containsExactly(args);
        java.nio.file.Files.write(cmdline, new byte[] {'c', 0, (byte) 0xff, 0});
        assertThat(Console.utf8Arguments(new String[] {"c", "\uFFFD"}, cmdline.toString(), posix))
                .as("not UTF-8 either").containsExactly("c", "\uFFFD");
    }
}
