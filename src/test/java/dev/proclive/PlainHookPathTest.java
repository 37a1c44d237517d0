package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.platform.Platform;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The plain hook path ({@code Platform.plainOwner}, {@code Platform.plainlyAlive}: on Linux
 * {@code ProcMount}) answers only what the general walk and checker answer, on real processes.
 */
@EnabledOnOs(OS.LINUX)
class PlainHookPathTest {

    @RegisterExtension
    final Children children = new Children();

    @Test
    void theDefaultSkipSetIsNamesThePlainWalkMatchesWhole() {
        assertThat(AncestorWalk.DEFAULT_SKIP).hasSizeGreaterThan(20).allSatisfy(name -> {
            // a comm matches a name of at most 15 bytes only when equal: no truncation to allow for
            assertThat(name).isNotEmpty().matches("[\\x21-\\x7e]{1,15}");
        });
        assertThat(String.join(" ", AncestorWalk.DEFAULT_SKIP)).isEqualTo(AncestorWalk.DEFAULT_SKIP_NAMES);
    }

    @Test
    void thisJvmsOwnerIsTheGeneralWalksOwner() {
        Identity plain = Platform.plainOwner(AncestorWalk.DEFAULT_SKIP_NAMES, OwnerResolver.DEFAULT_MAX_DEPTH)
                .orElseThrow();
        assertThat(plain).isEqualTo(AncestorWalk.owner(LivenessChecker.system(), AncestorWalk.DEFAULT_SKIP,
                        OwnerResolver.DEFAULT_MAX_DEPTH, 0, null).orElseThrow());
        assertThat(ProcLive.resolveOwner()).contains(plain);
    }

    /** A JVM under a shell and a launcher, each skipped by name: the owner is this test's JVM, either way. */
    @Test
    void anOwnerAboveShellsAndLaunchersIsTheGeneralWalksOwner() throws Exception {
        List<String> command = new ArrayList<>(List.of("sh", "-c", "\"$@\"; exit $?", "sh", "timeout", "60"));
        command.addAll(JavaMain.command(List.of("env"), OwnerBothWaysMain.class));
        String[] lines = run(command);
        assertThat(lines[0]).as("the plain walk's owner").isNotEqualTo("null").isEqualTo(lines[1]);
        assertThat(lines[0]).contains("pid=" + ProcessHandle.current().pid() + ",");
    }

    /** Too short a walk: the plain walk finds no owner, as the general one does. */
    @Test
    void whereTheWalkRunsOutThePlainWalkFindsNoOwnerEither() throws IOException {
        assertThat(Platform.plainOwner(AncestorWalk.DEFAULT_SKIP_NAMES, 0)).isNotNull().isEmpty();
        long parent = ProcessHandle.current().parent().orElseThrow().pid();
        String comm = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + parent + "/comm")).strip();
        String skip = comm + " " + AncestorWalk.DEFAULT_SKIP_NAMES;
        assertThat(Platform.plainOwner(skip, 1)).as("the parent skipped, and no more depth").isNotNull().isEmpty();
        assertThat(AncestorWalk.owner(LivenessChecker.system(), skip.split(" "), 1, 0, null)).isEmpty();
    }

    @Test
    void plainlyAliveOnlyWhereTheCheckerSaysAlive() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Process sleeper = children.sleeper();
        Identity sleeping = ProcLive.identify(sleeper.pid()).orElseThrow();
        Process ended = children.start("true");
        Identity gone = ProcLive.identify(ended.pid()).orElse(new Identity(ended.pid(), "1", "", "", "", ""));
        assertThat(ended.waitFor(60, TimeUnit.SECONDS)).isTrue();
        List<Identity> alive = List.of(self, sleeping,
                new Identity(self.pid(), self.start(), "", "", "", "", ""), // nothing but the process recorded
                new Identity(self.pid(), self.start(), self.boot(), self.host(), "another name", self.pidns(),
                        self.machine()));
        for (Identity id : alive) {
            assertThat(Platform.plainlyAlive(id)).as(id.toString()).isTrue();
            assertThat(LivenessChecker.system().check(id)).as(id.toString()).isEqualTo(Liveness.ALIVE);
            assertThat(ProcLive.check(id)).as(id.toString()).isEqualTo(Liveness.ALIVE);
        }
        List<Identity> notPlainlyAlive = List.of(gone,
                with(self, 0, self.start()), with(self, -1, self.start()),
                with(self, self.pid(), self.start() + "0"), with(self, self.pid(), "0" + self.start()),
                with(self, self.pid(), ""), with(self, self.pid(), "+" + self.start()),
                new Identity(self.pid(), self.start(), self.boot(), "another-host", "", self.pidns(), self.machine()),
                new Identity(self.pid(), self.start(), "another-boot", self.host(), "", self.pidns(), self.machine()),
                new Identity(self.pid(), self.start(), self.boot(), self.host(), "", "1", self.machine()),
                new Identity(self.pid(), self.start(), self.boot(), self.host(), "", self.pidns(),
                        "0123456789abcdef0123456789abcdef"));
        for (Identity id : notPlainlyAlive) {
            assertThat(Platform.plainlyAlive(id)).as(id.toString()).isFalse();
            Liveness general = LivenessChecker.system().check(id);
            assertThat(general).as(id.toString()).isNotEqualTo(Liveness.ALIVE);
            assertThat(ProcLive.check(id)).as(id.toString()).isEqualTo(general);
        }
    }

    private static Identity with(Identity id, long pid, String start) {
        return new Identity(pid, start, id.boot(), id.host(), id.name(), id.pidns(), id.machine());
    }

    private static String[] run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        String[] lines = out.strip().split("\n");
        assertThat(lines).as(out).hasSize(2);
        return lines;
    }
}
