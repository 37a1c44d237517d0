package dev.proclive.cli;

import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Another machine with the same host name, built for real: a private mount namespace with another
 * machine id and boot id bound over this machine's files ({@code /etc/machine-id},
 * {@code /var/lib/dbus/machine-id}, {@code /proc/sys/kernel/random/boot_id}), as a second VM from
 * one image or a state file on a shared disk would see it. The host's files are never changed.
 * Needs root (mounts); elsewhere each test skips with the reason.
 */
@EnabledOnOs(OS.LINUX)
class AnotherMachineIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    static final String OTHER_MACHINE = "fedcba9876543210fedcba9876543210";
    static final String OTHER_BOOT = "00000000-1111-2222-3333-444444444444";
    static final List<String> ID_FILES = List.of("/etc/machine-id", "/var/lib/dbus/machine-id");

    final ObjectMapper mapper = new ObjectMapper();

    @TempDir
    Path dir;
    Path jar;

    @BeforeEach
    void needsRootAndAMachineId() throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root to bind files over the machine id and boot id in a mount namespace; runs in CI as root");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/unshare")) || Files.isExecutable(Path.of("/bin/unshare")),
                "unshare (util-linux) is needed; .ci/run installs it");
        assumeTrue(ID_FILES.stream().anyMatch(f -> Files.isRegularFile(Path.of(f))),
                "this machine has no machine-id file to bind another over");
        jar = Cli.worldReadableCopy(dir);
    }

    private Identity liveSleeper() throws IOException {
        Process p = new ProcessBuilder("sleep", "120").start();
        children.adopt(p);
        return ProcLive.identify(p.pid()).orElseThrow();
    }

    private static String quote(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /**
     * {@code proclive ARGS} in a private mount namespace where {@code machineId} (the file's whole
     * text, or null to keep this machine's) is bound over each machine-id file that exists, and
     * {@code bootId} (or null) over the boot id.
     */
    private Cli.Result elsewhere(String machineId, String bootId, String stdin, String... args) throws Exception {
        StringBuilder script = new StringBuilder("set -e\n");
        if (machineId != null) {
            Path file = Files.writeString(dir.resolve("machine-id"), machineId);
            for (String target : ID_FILES) {
                if (Files.isRegularFile(Path.of(target))) {
                    script.append("mount --bind ").append(quote(file.toString())).append(' ').append(target).append('\n');
                }
            }
        }
        if (bootId != null) {
            Path file = Files.writeString(dir.resolve("boot_id"), bootId + "\n");
            script.append("mount --bind ").append(quote(file.toString())).append(" /proc/sys/kernel/random/boot_id\n");
        }
        List<String> words = new ArrayList<>();
        for (String w : Cli.command(jar, args)) {
            words.add(quote(w));
        }
        script.append("exec ").append(String.join(" ", words)).append('\n');
        return Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script.toString()),
                stdin);
    }

    private JsonNode verdict(Cli.Result r) throws IOException {
        return mapper.readTree(r.out());
    }

    @Test
    void anIdentityOfThisMachineRecordsIt() throws Exception {
        Identity id = liveSleeper();
        assertThat(id.machine()).as("this machine's id is recorded").matches("[0-9a-f]{32}");
        assertThat(id.machine()).isEqualTo(Files.readString(Path.of(
                Files.isRegularFile(Path.of(ID_FILES.get(0))) ? ID_FILES.get(0) : ID_FILES.get(1))).strip());
    }

    @Test
    void aLiveProcessOfAnotherMachineWithTheSameHostNameIsUnknownNeverDead() throws Exception {
        Identity id = liveSleeper();
        Cli.Result r = elsewhere(OTHER_MACHINE + "\n", OTHER_BOOT, mapper.writeValueAsString(id), "check");
        assertThat(r.exit()).as(r.toString()).isEqualTo(2);
        assertThat(verdict(r).path("reason").asText()).isEqualTo("other_host");
        // the same machine id but the process gone there is still not this machine's to judge
        Cli.Result same = elsewhere(OTHER_MACHINE + "\n", null, mapper.writeValueAsString(id), "check");
        assertThat(same.exit()).as(same.toString()).isEqualTo(2);
    }

    @Test
    void onlyTheBootIdChangedIsARebootOfThisMachine() throws Exception {
        Identity id = liveSleeper();
        Cli.Result r = elsewhere(null, OTHER_BOOT, mapper.writeValueAsString(id), "check");
        assertThat(r.exit()).as(r.toString()).isEqualTo(1);
        assertThat(verdict(r).path("reason").asText()).isEqualTo("rebooted");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "uninitialized\n", "00000000000000000000000000000000\n", "3D1219C7C4C5404AAA1F6D2A48ADFDA4\n"})
    void noReadableMachineIdNowIsUnknownForAnIdentityThatHasOne(String text) throws Exception {
        Identity id = liveSleeper();
        Cli.Result r = elsewhere(text, OTHER_BOOT, mapper.writeValueAsString(id), "check");
        assertThat(r.exit()).as(r.toString()).isEqualTo(2);
        assertThat(verdict(r).path("reason").asText()).isEqualTo("other_host");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "uninitialized\n", "00000000000000000000000000000000\n", "not-a-machine-id\n"})
    void aMalformedIdFileRecordsNoMachine(String text) throws Exception {
        Identity id = liveSleeper();
        Cli.Result r = elsewhere(text, null, "", "identify", Long.toString(id.pid()));
        assertThat(r.exit()).as(r.toString()).isZero();
        JsonNode recorded = mapper.readTree(r.out());
        assertThat(recorded.path("pid").asLong()).isEqualTo(id.pid());
        assertThat(recorded.has("machine")).as(r.out()).isFalse();
    }

    @Test
    void anIdentityWithoutAMachineKeepsTheHostRule() throws Exception {
        Identity recorded = liveSleeper();
        String go = "{\"pid\":" + recorded.pid() + ",\"start\":\"" + recorded.start() + "\",\"boot\":\""
                + recorded.boot() + "\",\"host\":\"" + recorded.host() + "\",\"name\":\"sleep\"}";
        Cli.Result here = elsewhere(null, null, go, "check");
        assertThat(here.exit()).as(here.toString()).isZero();
        // what such an identity assumes: a host name is unique among the machines that share it
        Cli.Result there = elsewhere(OTHER_MACHINE + "\n", OTHER_BOOT, go, "check");
        assertThat(there.exit()).as(there.toString()).isEqualTo(1);
        assertThat(verdict(there).path("reason").asText()).isEqualTo("rebooted");
    }

    @Test
    void theNamespaceReallyShowsAnotherMachine() throws Exception {
        Path probe = dir.resolve("probe.sh");
        Files.writeString(probe, "cat " + ID_FILES.stream().filter(f -> Files.isRegularFile(Path.of(f))).findFirst().get()
                + " /proc/sys/kernel/random/boot_id\n");
        Path file = Files.writeString(dir.resolve("m"), OTHER_MACHINE + "\n");
        Path boot = Files.writeString(dir.resolve("b"), OTHER_BOOT + "\n");
        StringBuilder script = new StringBuilder("set -e\n");
        for (String target : ID_FILES) {
            if (Files.isRegularFile(Path.of(target))) {
                script.append("mount --bind ").append(file).append(' ').append(target).append('\n');
            }
        }
        script.append("mount --bind ").append(boot).append(" /proc/sys/kernel/random/boot_id\nsh ").append(probe);
        Cli.Result r = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script.toString()), "");
        assertThat(r.out()).isEqualTo(OTHER_MACHINE + "\n" + OTHER_BOOT + "\n");
        assertThat(Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII).strip())
                .as("the host's boot id is untouched").isNotEqualTo(OTHER_BOOT);
    }
}
