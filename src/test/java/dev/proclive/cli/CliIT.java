package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
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

    @Test
    void aBadPidErrorSaysWhatIsWrong() {
        assertThat(Cli.runWithStdin("{\"pid\":1.5}", "check").err()).contains("\"pid\" must be a whole number");
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
        assertThat(r.out()).contains("ALIVE matched", "DEAD exited", "DEAD zombie", "DEAD pid_reused",
                "UNKNOWN other_host");
    }

    @Test
    void demoRunsEverywhere() {
        Cli.Result r = Cli.run("demo");
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("UNKNOWN");
        assertThat(r.err()).doesNotContain("Exception");
    }
}
