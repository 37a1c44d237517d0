package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.LivenessChecker;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** machine-id(5) as the Linux introspector reads it: which files, which text is an id, read once. */
@DisabledOnOs(OS.WINDOWS) // FakeProc makes symbolic links
class MachineIdTest {

    static final String ID = "3d1219c7c4c5404aaa1f6d2a48adfda4";
    static final String DBUS = "aaaabbbbccccddddeeeeffff00001111";

    @TempDir
    Path dir;
    FakeProc proc;

    @BeforeEach
    void tree() {
        proc = new FakeProc(dir);
    }

    @AfterEach
    void removeLinks() throws java.io.IOException {
        FakeProc.removeLinks(dir);
    }

    @Test
    void anIdIsOneLineOf32LowercaseHexDigits() {
        assertThat(ProcMount.parseMachineId(ID + "\n")).contains(ID);
        assertThat(ProcMount.parseMachineId(ID)).contains(ID);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\n", "uninitialized\n", "00000000000000000000000000000000\n",
            "3D1219C7C4C5404AAA1F6D2A48ADFDA4\n", "3d1219c7c4c5404aaa1f6d2a48adfda\n",
            "3d1219c7c4c5404aaa1f6d2a48adfda4a\n", " 3d1219c7c4c5404aaa1f6d2a48adfda4\n",
            "3d1219c7c4c5404aaa1f6d2a48adfda4\n\n", "3d1219c7-c4c5-404a-aa1f-6d2a48adfda4\n",
            "3d1219c7c4c5404aaa1f6d2a48adfdg4\n", "3d1219c7c4c5404aaa1f6d2a48adfda4\r\n"})
    void anythingElseIsNoId(String text) {
        assertThat(ProcMount.parseMachineId(text)).isEmpty();
    }

    @Test
    void etcComesFirst() {
        proc.file(FakeProc.MACHINE + "/etc/machine-id", ID + "\n");
        proc.file(FakeProc.MACHINE + "/var/lib/dbus/machine-id", DBUS + "\n");
        assertThat(proc.introspector(null).machineId()).contains(ID);
    }

    @Test
    void dbusIsTheFallbackWhenEtcIsMissingOrMalformed() {
        proc.file(FakeProc.MACHINE + "/var/lib/dbus/machine-id", DBUS + "\n");
        proc.delete(FakeProc.MACHINE + "/etc/machine-id");
        assertThat(proc.introspector(null).machineId()).contains(DBUS);
        proc.file(FakeProc.MACHINE + "/etc/machine-id", "uninitialized\n");
        assertThat(proc.introspector(null).machineId()).contains(DBUS);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "uninitialized\n", "00000000000000000000000000000000\n", "not an id\n"})
    void aMalformedIdRecordsNoMachine(String text) {
        proc.file(FakeProc.MACHINE + "/etc/machine-id", text);
        proc.process(77, "spaces.stat");
        LinuxProcessIntrospector linux = proc.introspector(null);
        assertThat(linux.machineId()).isEmpty();
        assertThat(LivenessChecker.of(linux).identify(77)).get().satisfies(id -> assertThat(id.machine()).isEmpty());
    }

    @Test
    void anIdentityRecordsTheMachine() {
        proc.process(77, "spaces.stat");
        assertThat(LivenessChecker.of(proc.introspector(null)).identify(77))
                .get().satisfies(id -> assertThat(id.machine()).isEqualTo(FakeProc.FAKE_MACHINE));
    }

    @Test
    void theIdIsReadOnceWhateverIsAsked() {
        List<String> opened = new ArrayList<>();
        proc.process(77, "spaces.stat");
        LinuxProcessIntrospector linux = proc.introspector(null, opened::add);
        LivenessChecker checker = LivenessChecker.of(linux);
        var id = checker.identify(77).orElseThrow();
        for (int i = 0; i < 5; i++) {
            checker.check(id);
        }
        proc.file(FakeProc.MACHINE + "/etc/machine-id", DBUS + "\n");
        assertThat(linux.machineId()).contains(FakeProc.FAKE_MACHINE);
        assertThat(opened.stream().filter(p -> p.endsWith("machine-id"))).hasSize(1);
        assertThat(checker.check(id)).isEqualTo(dev.proclive.Liveness.ALIVE);
        assertThat(Optional.of(id.machine())).isEqualTo(linux.machineId());
    }
}
