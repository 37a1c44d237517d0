package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.Reason;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import dev.proclive.spi.internal.ProgramNames;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The Linux introspector over fake procfs trees: every branch without needing the real kernel. */
@org.junit.jupiter.api.condition.DisabledOnOs(org.junit.jupiter.api.condition.OS.WINDOWS) // symlinks
class LinuxProcessIntrospectorTest {

    @org.junit.jupiter.api.AfterEach
    void removeLinks() throws java.io.IOException {
        FakeProc.removeLinks(dir);
    }


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

    /** Rows 5 to 9 of the precedence for a bare identity of {@code pid} started at {@code start}. */
    private static Reason reason(LinuxProcessIntrospector linux, long pid, String start) {
        return LivenessChecker.of(linux).explain(new Identity(pid, start, "", "", "", "")).reason();
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
    void aStartTheKernelNeverWritesProvesNothing() {
        proc.process(77, "spaces.stat"); // started at 4180
        assertThat(reason(proc.introspector(NEVER), 77, "4180")).isEqualTo(Reason.MATCHED);
        assertThat(reason(proc.introspector(NEVER), 77, "4179")).isEqualTo(Reason.PID_REUSED);
        assertThat(reason(proc.introspector(NEVER), 77, "4182")).isEqualTo(Reason.PID_REUSED);
        for (String unwritten : new String[] {"04180", "004180", "+4180", " 4180", "4180 ", "4180.0", "-4180",
                "\u0664\u0661\u0668\u0660"}) {
            assertThat(reason(proc.introspector(NEVER), 77, unwritten)).as(unwritten).isEqualTo(Reason.NO_FINGERPRINT);
        }
        assertThat(proc.introspector(NEVER).isFingerprint("0")).isTrue();
    }

    @Test
    void aMissingEntryIsGoneWhenNothingIsHidden() {
        assertThat(proc.introspector(NEVER).lookup(4242)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(reason(proc.introspector(NEVER), 4242, "1")).isEqualTo(Reason.EXITED);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void nonPositivePidsAreNeverFound(long pid) {
        assertThat(proc.introspector(NEVER).lookup(pid)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(proc.introspector(NEVER).lookupProcess(pid)).isInstanceOf(ProcessLookup.Gone.class);
    }

    @Test
    void aHugePidIsSimplyNotFound() {
        assertThat(proc.introspector(NEVER).lookup(Long.MAX_VALUE)).isInstanceOf(ProcessLookup.Gone.class);
    }

    @Test
    void aZombieAloneIsAZombie() {
        proc.process(81, "zombie.stat").file("81/status", Fixtures.text("status/zombie-alone.status"));
        assertThat(found(proc.introspector(NEVER).lookup(81)).state()).isEqualTo(ProcessState.ZOMBIE);
        assertThat(reason(proc.introspector(NEVER), 81, "8000")).isEqualTo(Reason.ZOMBIE);
    }

    @Test
    void aZombieMainThreadWithLiveThreadsIsALiveProcess() {
        proc.process(81, "zombie.stat").file("81/status", Fixtures.text("status/zombie-with-threads.status"));
        assertThat(found(proc.introspector(NEVER).lookup(81)).state()).isEqualTo(ProcessState.LIVE);
        assertThat(reason(proc.introspector(NEVER), 81, "8000")).isEqualTo(Reason.MATCHED);
    }

    @Test
    void aZombieReapedBeforeItsStatusIsReadIsGone() {
        proc.process(81, "zombie.stat").delete("81/status");
        assertThat(proc.introspector(NEVER).lookup(81)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(reason(proc.introspector(NEVER), 81, "8000")).isEqualTo(Reason.EXITED);
    }

    @Test
    void aDeadTaskIsExited() {
        proc.process(82, "dead.stat");
        assertThat(reason(proc.introspector(NEVER), 82, "9000")).isEqualTo(Reason.EXITED);
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
        assertThat(reason(proc.introspector(NEVER), 83, "1")).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void aLineNamingAnotherPidIsAnIoError() {
        proc.file("84/stat", Fixtures.text("stat/plain.stat")); // says 2441
        assertThat(proc.introspector(NEVER).lookup(84)).isInstanceOf(ProcessLookup.Unknown.class);
        assertThat(reason(proc.introspector(NEVER), 84, "48903")).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void anyOtherReadFailureIsAnIoErrorNeverDead() throws Exception {
        java.nio.file.Files.createDirectories(dir.resolve("85/stat")); // read(2) fails with EISDIR
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.lookup(85)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.IO_ERROR));
        assertThat(reason(linux, 85, "1")).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void hiddenAndPresentIsAccessDenied() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "no-caps.status");
        LinuxProcessIntrospector linux = proc.introspector(pid -> PidPresence.Presence.PRESENT);
        assertThat(linux.lookup(4242)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.ACCESS_DENIED));
        assertThat(reason(linux, 4242, "1")).isEqualTo(Reason.ACCESS_DENIED);
    }

    @Test
    void hiddenAndAbsentIsGone() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "no-caps.status");
        LinuxProcessIntrospector linux = proc.introspector(pid -> PidPresence.Presence.ABSENT);
        assertThat(linux.lookup(4242)).isInstanceOf(ProcessLookup.Gone.class);
        assertThat(reason(linux, 4242, "1")).isEqualTo(Reason.EXITED);
    }

    @Test
    void hiddenWithoutKillIsUnknownNeverDead() {
        proc.mountinfo("hidepid-numeric.mountinfo").self(1000, "no-caps.status");
        LinuxProcessIntrospector linux = proc.introspector(pid -> PidPresence.Presence.UNAVAILABLE);
        assertThat(reason(linux, 4242, "1")).isEqualTo(Reason.ACCESS_DENIED);
    }

    @Test
    void hidingDoesNotApplyToATaskWithCapSysPtrace() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "self.status");
        assertThat(reason(proc.introspector(NEVER), 4242, "1")).isEqualTo(Reason.EXITED);
    }

    @Test
    void capSysPtraceInAChildUserNamespaceDoesNotSeePastHiding() {
        // unshare -U -r: CapEff shows every capability, but not over a procfs of the outer namespace.
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "self.status")
                .link("self/ns/user", "user:[4026532200]");
        LinuxProcessIntrospector linux = proc.introspector(pid -> PidPresence.Presence.PRESENT);
        assertThat(reason(linux, 4242, "1")).isEqualTo(Reason.ACCESS_DENIED);
        assertThat(reason(proc.introspector(pid -> PidPresence.Presence.ABSENT), 4242, "1")).isEqualTo(Reason.EXITED);
    }

    @Test
    void anUnreadableUserNamespaceIsNotTakenForTheInitialOne() {
        proc.mountinfo("hidepid-invisible-stacked.mountinfo").self(1000, "self.status").delete("self/ns/user");
        assertThat(reason(proc.introspector(pid -> PidPresence.Presence.PRESENT), 4242, "1"))
                .isEqualTo(Reason.ACCESS_DENIED);
    }

    @Test
    void aPlainFileSystemErrorInAProcessDirectoryIsAccessDeniedWhateverItsText() throws Exception {
        // EPERM (hidepid=noaccess) has no exception type of its own; a link loop (ELOOP) gives the
        // same plain FileSystemException, with another message.
        java.nio.file.Files.createDirectories(dir.resolve("86"));
        proc.link("86/stat", dir.resolve("86/stat").toString());
        assertThat(reason(proc.introspector(NEVER), 86, "1")).isEqualTo(Reason.ACCESS_DENIED);
    }

    @Test
    void startsAreTakenOutOfATimeNamespace() {
        // unshare -T --boottime 1000: stat shows 100000 more ticks than the fingerprint.
        proc.file("self/timens_offsets", "monotonic           0         0\nboottime         1000         0\n")
                .process(77, "spaces.stat");
        proc.file("77/stat", Fixtures.text("stat/spaces.stat").replace(" 4180 ", " 104180 ")
                .replaceFirst("^\\d+", "77"));
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(found(linux.lookup(77)).start()).isEqualTo("4180");
        assertThat(reason(linux, 77, "4180")).isEqualTo(Reason.MATCHED);
        assertThat(reason(linux, 77, "104180")).isEqualTo(Reason.PID_REUSED);
        assertThat(reason(linux, 77, "4179")).isEqualTo(Reason.PID_REUSED);
        assertThat(linux.self()).isInstanceOfSatisfying(ProcessLookup.Found.class,
                f -> assertThat(f.info().start()).isEqualTo("-99500"));
    }

    @Test
    void anOffsetWithAFractionOfATickAlsoMatchesTheTickBefore() {
        proc.file("self/timens_offsets", "monotonic 0 0\nboottime 1000 5000000\n").process(77, "spaces.stat");
        proc.file("77/stat", Fixtures.text("stat/spaces.stat").replace(" 4180 ", " 104180 ")
                .replaceFirst("^\\d+", "77"));
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(found(linux.lookup(77)).start()).isEqualTo("4180");
        assertThat(reason(linux, 77, "4180")).isEqualTo(Reason.MATCHED);
        assertThat(reason(linux, 77, "4179")).isEqualTo(Reason.MATCHED);
        assertThat(reason(linux, 77, "4181")).as("recorded a tick late, anywhere").isEqualTo(Reason.MATCHED);
        assertThat(reason(linux, 77, "4182")).isEqualTo(Reason.PID_REUSED);
        assertThat(reason(linux, 77, "4178")).isEqualTo(Reason.PID_REUSED);
    }

    /**
     * A recorder in a time namespace whose offset has a fraction of a tick may write any process's
     * start a tick late, and nothing says where an identity was recorded: the tick after matches
     * wherever it is judged, spelled as the kernel spells starts. Never the tick before: a later
     * process with the pid cannot have started before the recorded one.
     */
    @Test
    void aStartRecordedATickLateMatchesWhereverItIsJudged() {
        proc.process(77, "spaces.stat"); // started at 4180
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(reason(linux, 77, "4181")).isEqualTo(Reason.MATCHED);
        assertThat(reason(linux, 77, "4179")).isEqualTo(Reason.PID_REUSED);
        assertThat(reason(linux, 77, "4182")).isEqualTo(Reason.PID_REUSED);
        assertThat(reason(linux, 77, "04181")).isEqualTo(Reason.NO_FINGERPRINT);
    }

    /** A negative offset larger than a process's start shows that start wrapped around: not comparable. */
    @Test
    void aStartWrappedAroundByANegativeOffsetIsNoFingerprint() {
        proc.file("self/timens_offsets", "monotonic 0 0\nboottime -60 0\n").process(77, "spaces.stat");
        proc.file("77/stat", Fixtures.text("stat/spaces.stat").replace(" 4180 ", " 1844674407370 ")
                .replaceFirst("^\\d+", "77"));
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.lookup(77)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.NO_FINGERPRINT));
        assertThat(reason(linux, 77, "4180")).isEqualTo(Reason.NO_FINGERPRINT);
    }

    @Test
    void malformedTimeOffsetsTrustNothing() {
        proc.file("self/timens_offsets", "boottime lots 0\n").process(77, "spaces.stat");
        assertThat(reason(proc.introspector(NEVER), 77, "4180")).isEqualTo(Reason.IO_ERROR);
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
        assertThat(reason(linux, 77, "4180")).isEqualTo(Reason.MATCHED);
        assertThat(asked).hasValue(0);
    }

    @Test
    void aProcMountedForAnotherNamespaceIsTrustedForNothing() {
        proc.self(1000, "nested-nspid.status").process(77, "spaces.stat");
        LinuxProcessIntrospector linux = proc.introspector(NEVER);
        assertThat(linux.lookup(77)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.OTHER_PID_NAMESPACE));
        assertThat(linux.self()).isInstanceOf(ProcessLookup.Unknown.class);
        assertThat(reason(linux, 77, "4180")).isEqualTo(Reason.OTHER_PID_NAMESPACE);
    }

    @Test
    void aProcWithoutSelfIsTrustedForNothing() {
        proc.delete("self/status").delete("self/stat").process(77, "spaces.stat");
        assertThat(reason(proc.introspector(NEVER), 77, "4180")).isEqualTo(Reason.OTHER_PID_NAMESPACE);
    }

    @Test
    void anOldKernelWithoutNspidIsTrusted() {
        proc.self(1000, "old-kernel-no-nspid.status").process(77, "spaces.stat");
        assertThat(reason(proc.introspector(NEVER), 77, "4180")).isEqualTo(Reason.MATCHED);
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

    @Test
    void programNamesComeFromTheExeLinkAndArgv0() {
        proc.process(77, "spaces.stat").link("77/exe", "/usr/bin/dash").file("77/cmdline", "/bin/sh\0./hook.sh\0");
        assertThat(proc.introspector(NEVER).programNames(77)).isEqualTo(new ProgramNames("dash", "sh"));
    }

    @Test
    void aDeletedExecutableIsNamedWithoutTheSuffix() {
        proc.process(77, "spaces.stat").link("77/exe", "/usr/bin/bash (deleted)").file("77/cmdline", "-bash\0");
        assertThat(proc.introspector(NEVER).programNames(77)).isEqualTo(new ProgramNames("bash", "bash"));
    }

    @Test
    void unreadableNamesAreEmptyNeverAnError() {
        proc.process(77, "spaces.stat");
        assertThat(proc.introspector(NEVER).programNames(77)).isEqualTo(ProgramNames.UNKNOWN);
        assertThat(proc.introspector(NEVER).programNames(-1)).isEqualTo(ProgramNames.UNKNOWN);
        proc.file("77/cmdline", "");
        assertThat(proc.introspector(NEVER).programNames(77)).isEqualTo(ProgramNames.UNKNOWN);
    }

    @Test
    void argv0IsTheFileNameOfTheFirstWord() {
        assertThat(argv0("/usr/bin/python3\0agent.py\0")).isEqualTo("python3");
        assertThat(argv0("-/bin/zsh\0")).isEqualTo("zsh");
        assertThat(argv0("sh")).isEqualTo("sh");
        assertThat(argv0("\0x\0")).isEmpty();
        assertThat(argv0("/bin/")).isEmpty();
    }

    private static String argv0(String cmdline) {
        byte[] b = cmdline.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return ProcReader.argv0(b, b.length);
    }
}
