package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Reason;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Linux introspector over fake procfs trees: every branch without needing the real kernel. */
@org.junit.jupiter.api.condition.DisabledOnOs(org.junit.jupiter.api.condition.OS.WINDOWS) // symlinks
class LinuxProcessIntrospectorTest {

    @TempDir
    Path dir;
    FakeProc proc;

    /** Fails the test if kill(2) is asked where /proc can answer. */
    static final PidPresence NEVER = pid -> {
        throw new AssertionError("kill(" + pid + ", 0) must not be needed here");
    };

    @BeforeEach
    void tree() {
        proc = new FakeProc(dir);
    }

    private static ProcessInfo found(ProcessLookup lookup) {
        assertThat(lookup).isInstanceOf(ProcessLookup.Found.class);
        return ((ProcessLookup.Found) lookup).info();
    }

    @Test
    void readsAProcess() {
        proc.process(77, "spaces.stat");
        assertThat(found(proc.introspector(NEVER).lookup(77)))
                .isEqualTo(new ProcessInfo(77, 1, "my proc name", "4180", ProcessState.LIVE));
    }

    @Test
    void aMissingEntryIsGoneWhenNothingIsHidden() {
        assertThat(proc.introspector(NEVER).lookup(4242)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(proc.introspector(NEVER).probe(4242, "1")).isEqualTo(Reason.EXITED);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void nonPositivePidsAreNeverFound(long pid) {
        assertThat(proc.introspector(NEVER).lookup(pid)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(proc.introspector(NEVER).probe(pid, "1")).isEqualTo(Reason.EXITED);
    }

    @Test
    void aHugePidIsSimplyNotFound() {
        assertThat(proc.introspector(NEVER).lookup(Long.MAX_VALUE)).isInstanceOf(ProcessLookup.Gone.class);
    }

    @Test
    void aZombieAloneIsAZombie() {
        proc.process(81, "zombie.stat").file("81/status", Fixtures.text("status/zombie-alone.status"));
        assertThat(found(proc.introspector(NEVER).lookup(81)).state()).isEqualTo(ProcessState.ZOMBIE);
        assertThat(proc.introspector(NEVER).probe(81, "8000")).isEqualTo(Reason.ZOMBIE);
    }

    @Test
    void aZombieMainThreadWithLiveThreadsIsALiveProcess() {
        proc.process(81, "zombie.stat").file("81/status", Fixtures.text("status/zombie-with-threads.status"));
        assertThat(found(proc.introspector(NEVER).lookup(81)).state()).isEqualTo(ProcessState.LIVE);
        assertThat(proc.introspector(NEVER).probe(81, "8000")).isEqualTo(Reason.MATCHED);
    }

    @Test
    void aZombieReapedBeforeItsStatusIsReadIsGone() {
        proc.process(81, "zombie.stat").delete("81/status");
        assertThat(proc.introspector(NEVER).lookup(81)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(proc.introspector(NEVER).probe(81, "8000")).isEqualTo(Reason.EXITED);
    }

    @Test
    void aDeadTaskIsExited() {
        proc.process(82, "dead.stat");
        assertThat(proc.introspector(NEVER).probe(82, "9000")).isEqualTo(Reason.EXITED);
    }

    @Test
    void aThreadIdIsReadForAVerdictButRefusedAsAProcess() {
        proc.process(90, "plain.stat").file("90/status", Fixtures.text("status/thread-90-of-77.status"));
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.lookup(90)).isInstanceOf(ProcessLookup.Found.class);
        assertThat(linux.lookupProcess(90)).isInstanceOfSatisfying(ProcessLookup.Gone.class,
                gone -> assertThat(gone.detail()).contains("thread of process 77"));
    }

    @Test
    void aMalformedLineIsAnIoErrorNotAVerdict() {
        proc.process(83, "truncated.stat");
        assertThat(proc.introspector(NEVER).lookup(83)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.IO_ERROR));
        assertThat(proc.introspector(NEVER).probe(83, "1")).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void aLineNamingAnotherPidIsAnIoError() {
        proc.file("84/stat", Fixtures.text("stat/plain.stat")); // says 2441
        assertThat(proc.introspector(NEVER).lookup(84)).isInstanceOf(ProcessLookup.Unknown.class);
        assertThat(proc.introspector(NEVER).probe(84, "48903")).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void anyOtherReadFailureIsAnIoErrorNeverDead() throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("85/stat")); // read(2) fails with EISDIR
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.lookup(85)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.IO_ERROR));
        assertThat(linux.probe(85, "1")).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void hiddenAndPresentIsAccessDenied() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "no-caps.status");
        LinuxProcessIntrospector linux = proc.introspector(pid -> PidPresence.Presence.PRESENT);
        assertThat(linux.lookup(4242)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.ACCESS_DENIED));
        assertThat(linux.probe(4242, "1")).isEqualTo(Reason.ACCESS_DENIED);
    }

    @Test
    void hiddenAndAbsentIsGone() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "no-caps.status");
        LinuxProcessIntrospector linux = proc.introspector(pid -> PidPresence.Presence.ABSENT);
        assertThat(linux.lookup(4242)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(linux.probe(4242, "1")).isEqualTo(Reason.EXITED);
    }

    @Test
    void hiddenWithoutKillIsUnknownNeverDead() {
        proc.mountinfo("hidepid-numeric.mountinfo").self(1000, "no-caps.status");
        LinuxProcessIntrospector linux = proc.introspector(pid -> PidPresence.Presence.UNAVAILABLE);
        assertThat(linux.probe(4242, "1")).isEqualTo(Reason.ACCESS_DENIED);
    }

    @Test
    void hidingDoesNotApplyToATaskWithCapSysPtrace() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "self.status");
        assertThat(proc.introspector(NEVER).probe(4242, "1")).isEqualTo(Reason.EXITED);
    }

    @Test
    void kill2IsAskedOnlyForMissingEntries() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "no-caps.status")
                .process(77, "spaces.stat");
        AtomicInteger asked = new AtomicInteger();
        LinuxProcessIntrospector linux = proc.introspector(pid -> {
            asked.incrementAndGet();
            return PidPresence.Presence.ABSENT;
        });
        assertThat(linux.probe(77, "4180")).isEqualTo(Reason.MATCHED);
        assertThat(asked).hasValue(0);
    }

    @Test
    void aProcMountedForAnotherNamespaceIsTrustedForNothing() {
        proc.self(1000, "nested-nspid.status").process(77, "spaces.stat");
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.lookup(77)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.OTHER_PID_NAMESPACE));
        assertThat(linux.self()).isInstanceOf(ProcessLookup.Unknown.class);
        assertThat(linux.probe(77, "4180")).isEqualTo(Reason.OTHER_PID_NAMESPACE);
    }

    @Test
    void aProcWithoutSelfIsTrustedForNothing() {
        proc.delete("self/status").delete("self/stat").process(77, "spaces.stat");
        assertThat(proc.introspector(NEVER).probe(77, "4180")).isEqualTo(Reason.OTHER_PID_NAMESPACE);
    }

    @Test
    void anOldKernelWithoutNspidIsTrusted() {
        proc.self(1000, "old-kernel-no-nspid.status").process(77, "spaces.stat");
        assertThat(proc.introspector(NEVER).probe(77, "4180")).isEqualTo(Reason.MATCHED);
    }

    @Test
    void selfIsReadThroughSelfNotThroughAPid() {
        assertThat(found(proc.introspector(NEVER).self()).pid()).isEqualTo(1000);
    }

    @Test
    void readsHostBootAndNamespace() {
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.hostName()).contains("fakehost");
        assertThat(linux.bootId()).contains("0f4c5e0e-1111-2222-3333-444455556666");
        assertThat(linux.pidNamespace()).contains("4026531836");
    }

    @Test
    void theBootIdIsReadOnceAndNeverReplacedByBtime() {
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.bootId()).isPresent();
        proc.file("sys/kernel/random/boot_id", "changed\n");
        assertThat(linux.bootId()).contains("0f4c5e0e-1111-2222-3333-444455556666");

        proc.delete("sys/kernel/random/boot_id").file("stat", "btime 1700000000\n");
        assertThat(proc.introspector(NEVER).bootId()).isEmpty();
    }

    @Test
    void anUnreadableHostIsEmpty() {
        proc.delete("sys/kernel/hostname");
        assertThat(proc.introspector(NEVER).hostName()).isEmpty();
    }

    @Test
    void longNamesAlsoMatchTheirFifteenByteTruncation() {
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.nameMatches("my-long-wrapper", "my-long-wrapper-script")).isTrue();
        assertThat(linux.nameMatches("my-long-wrapper-script", "my-long-wrapper-script")).isTrue();
        assertThat(linux.nameMatches("my-long-wrappe", "my-long-wrapper-script")).isFalse();
        assertThat(linux.nameMatches("bash", "bas")).isFalse();
        assertThat(linux.nameMatches("short", "shorter")).isFalse();
    }

    /** The fast verdict path must say exactly what decoding the whole line says. */
    @Test
    void probeAgreesWithLookupOnEveryFixture() {
        List<String> fixtures = List.of("plain.stat", "spaces.stat", "parens.stat", "newline.stat",
                "fake-fields-in-name.stat", "kernel-thread.stat", "zombie.stat", "dead.stat",
                "truncated.stat", "no-parens.stat", "bad-ppid.stat", "bad-start.stat", "empty.stat",
                "bad-pid.stat");
        long pid = 100;
        for (String fixture : fixtures) {
            pid++;
            if (fixture.equals("empty.stat") || fixture.equals("no-parens.stat") || fixture.equals("bad-pid.stat")) {
                proc.file(pid + "/stat", Fixtures.text("stat/" + fixture));
            } else {
                proc.process(pid, fixture);
            }
            if (fixture.equals("zombie.stat") || fixture.equals("fake-fields-in-name.stat")) {
                proc.status(pid, Fixtures.text("status/zombie-with-threads.status"));
            }
        }
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        for (long p = 101; p <= pid + 1; p++) {
            ProcessLookup lookup = linux.lookup(p);
            String actual = lookup instanceof ProcessLookup.Found f ? f.info().start() : "1";
            for (String recorded : List.of("", actual, actual + "0", "1", "x")) {
                assertThat(linux.probe(p, recorded))
                        .as("pid %d, recorded start '%s'", p, recorded)
                        .isEqualTo(lookup.reasonFor(recorded));
            }
        }
    }
}
