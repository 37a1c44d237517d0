package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Every row of the verdict precedence, and that earlier rows win, through a fake process table. */
class PrecedenceTest {

    static final long PID = 123;
    static final String START = "4567";

    final FakeIntrospector os = new FakeIntrospector().process(PID, 1, "owner", START);
    final LivenessChecker checker = LivenessChecker.of(os);

    static Identity full() {
        return new Identity(PID, START, FakeIntrospector.BOOT, FakeIntrospector.HOST, "owner",
                FakeIntrospector.PIDNS);
    }

    static Identity with(long pid, String start, String boot, String host, String pidns) {
        return new Identity(pid, start, boot, host, "owner", pidns);
    }

    private Verdict verdict(Identity id) {
        Verdict v = checker.explain(id);
        assertThat(checker.check(id)).as("check agrees with explain for %s", id).isEqualTo(v.liveness());
        assertThat(checker.checkAll(List.of(id))).containsExactly(v);
        return v;
    }

    private void assertReason(Identity id, Reason reason) {
        Verdict v = verdict(id);
        assertThat(v.reason()).isEqualTo(reason);
        assertThat(v.liveness()).isEqualTo(reason.liveness());
        assertThat(v.detail()).isNotBlank();
    }

    @Test
    void row1NoPidIsNoIdentity() {
        assertReason(with(0, START, "", "", ""), Reason.NO_IDENTITY);
        assertReason(with(-5, START, "", "", ""), Reason.NO_IDENTITY);
        assertReason(new Identity(0, null, null, null, null, null), Reason.NO_IDENTITY);
    }

    @Test
    void row1BeatsEveryOtherRow() {
        os.host = Optional.empty();
        assertReason(with(0, START, "other-boot", "elsewhere", "1"), Reason.NO_IDENTITY);
    }

    @Test
    void row2AnotherHostIsUnknown() {
        assertReason(with(PID, START, "", "elsewhere", ""), Reason.OTHER_HOST);
    }

    @Test
    void row2AnUnreadableHostIsUnknown() {
        os.host = Optional.empty();
        assertReason(full(), Reason.OTHER_HOST);
    }

    @Test
    void row2NoRecordedHostSkipsTheHostGuard() {
        os.host = Optional.empty();
        assertReason(with(PID, START, "", "", ""), Reason.MATCHED);
    }

    @Test
    void eachGuardSaysWhatItCompared() {
        assertThat(checker.explain(with(0, START, "", "", "")).detail()).contains("pid 0");
        assertThat(checker.explain(with(PID, START, "", "elsewhere", "")).detail())
                .contains("elsewhere", FakeIntrospector.HOST);
        assertThat(checker.explain(with(PID, START, "", "", "4026532999")).detail())
                .contains("4026532999", FakeIntrospector.PIDNS);
        assertThat(checker.explain(with(PID, START, "boot-0", "", "")).detail()).contains("boot-0", FakeIntrospector.BOOT);
        os.host = Optional.empty();
        os.pidns = Optional.empty();
        os.boot = Optional.empty();
        LivenessChecker blind = LivenessChecker.of(os);
        assertThat(blind.explain(with(PID, START, "", "elsewhere", "")).detail()).contains("name cannot be read");
        assertThat(blind.explain(with(PID, START, "", "", "4026532999")).detail()).contains("cannot be read");
        assertThat(blind.explain(with(PID, START, "boot-0", "", "")).detail()).contains("boot id cannot be read");
    }

    @Test
    void eachProcessRowSaysWhatItSaw() {
        os.put(8, new ProcessLookup.Gone("no /proc/8"));
        assertThat(checker.explain(with(8, START, "", "", "")).detail()).isEqualTo("pid 8 (owner) is gone: no /proc/8");
        os.put(9, new ProcessLookup.Gone(""));
        assertThat(checker.explain(new Identity(9, START, "", "", "", "")).detail()).isEqualTo("pid 9 is gone");
        assertThat(checker.explain(with(PID, "", "", "", "")).detail()).contains("running as owner", "no start fingerprint");
        assertThat(checker.explain(with(PID, "1", "", "", "")).detail())
                .isEqualTo("pid 123 (owner) now belongs to owner started at 4567, not at 1");
        assertThat(checker.explain(with(PID, START, "", "", "")).detail())
                .isEqualTo("pid 123 (owner) is running, started at 4567");
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.ZOMBIE)));
        assertThat(checker.explain(with(PID, START, "", "", "")).detail()).contains("waits to be reaped");
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.DEAD)));
        assertThat(checker.explain(with(PID, START, "", "", "")).detail()).contains("torn down");
        os.put(PID, new ProcessLookup.Unknown(Reason.ACCESS_DENIED, "hidden by hidepid"));
        assertThat(checker.explain(with(PID, START, "", "", "")).detail()).isEqualTo("hidden by hidepid");
        os.pidns = Optional.of("4026532999");
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.LIVE)));
        assertThat(LivenessChecker.of(os).explain(with(PID, "1", "", "", "")).detail())
                .contains("runs another process", "4026532999", "may come from the host");
    }

    @Test
    void aDeadTaskWithTheRecordedStartExited() {
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.DEAD)));
        assertReason(with(PID, START, "", "", ""), Reason.EXITED);
    }

    @Test
    void identifyOfANonPositivePidAsksNothing() {
        os.lookups = 0;
        assertThat(checker.identify(0)).isEmpty();
        assertThat(checker.identify(-7)).isEmpty();
        assertThat(os.lookups).isZero();
    }

    @Test
    void row2BeatsNamespaceBootAndProcess() {
        os.put(PID, new ProcessLookup.Gone("gone"));
        assertReason(with(PID, START, "other-boot", "elsewhere", "999"), Reason.OTHER_HOST);
    }

    @Test
    void row3AnotherPidNamespaceIsUnknown() {
        assertReason(with(PID, START, "", FakeIntrospector.HOST, "999"), Reason.OTHER_PID_NAMESPACE);
    }

    @Test
    void row3AnUnreadableNamespaceIsUnknown() {
        os.pidns = Optional.empty();
        assertReason(full(), Reason.OTHER_PID_NAMESPACE);
    }

    /** Inside a container: the identity records no namespace, as the Go package writes them. */
    private void inAnotherPidNamespace() {
        os.pidns = Optional.of("4026532999");
    }

    @Test
    void row3AnUnrecordedNamespaceJudgedInsideAContainerIsNeverExited() {
        inAnotherPidNamespace();
        assertReason(with(999, START, FakeIntrospector.BOOT, FakeIntrospector.HOST, ""), Reason.OTHER_PID_NAMESPACE);
        assertThat(checker.explain(with(999, START, "", "", "")).detail()).contains("may come from the host");
    }

    @Test
    void row3AnUnrecordedNamespaceJudgedInsideAContainerIsNeverReused() {
        inAnotherPidNamespace();
        assertReason(with(PID, "1", "", "", ""), Reason.OTHER_PID_NAMESPACE);
    }

    @Test
    void row3AMatchingStartStillProvesTheProcessInsideAContainer() {
        inAnotherPidNamespace();
        assertReason(with(PID, START, "", "", ""), Reason.MATCHED);
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.ZOMBIE)));
        assertReason(with(PID, START, "", "", ""), Reason.ZOMBIE);
    }

    @Test
    void row3AnUnrecordedNamespaceInTheInitialOneIsJudgedAsBefore() {
        assertReason(with(999, START, "", "", ""), Reason.EXITED);
        assertReason(with(PID, "1", "", "", ""), Reason.PID_REUSED);
        os.pidns = Optional.empty(); // a platform without PID namespaces
        assertReason(with(999, START, "", "", ""), Reason.EXITED);
    }

    @Test
    void row3ARecordedNamespaceInsideAContainerIsJudgedAsBefore() {
        inAnotherPidNamespace();
        assertReason(with(999, START, "", "", "4026532999"), Reason.EXITED);
        assertReason(with(PID, "1", "", "", "4026532999"), Reason.PID_REUSED);
    }

    @Test
    void row3AnUnrecordedNamespaceKeepsAnUnreadableProcessUnknown() {
        inAnotherPidNamespace();
        os.put(PID, new ProcessLookup.Unknown(Reason.ACCESS_DENIED, "hidden"));
        assertReason(with(PID, START, "", "", ""), Reason.ACCESS_DENIED);
    }

    @Test
    void row3AnUnrecordedNamespaceWithoutFingerprintStaysNoFingerprint() {
        inAnotherPidNamespace();
        assertReason(with(PID, "", "", "", ""), Reason.NO_FINGERPRINT);
    }

    @Test
    void startsAreComparedByTheIntrospector() {
        LivenessChecker lenient = LivenessChecker.of(new FakeIntrospector() {
            @Override
            public boolean sameStart(String recorded, String current) {
                return recorded.equals(current) || recorded.equals("4566");
            }
        }.process(PID, 1, "owner", START));
        assertThat(lenient.explain(with(PID, "4566", "", "", "")).reason()).isEqualTo(Reason.MATCHED);
        assertThat(lenient.check(with(PID, "4566", "", "", ""))).isEqualTo(Liveness.ALIVE);
        assertThat(lenient.explain(with(PID, "4565", "", "", "")).reason()).isEqualTo(Reason.PID_REUSED);
    }

    @Test
    void row3BeatsBootAndProcess() {
        os.put(PID, new ProcessLookup.Gone("gone"));
        assertReason(with(PID, START, "other-boot", FakeIntrospector.HOST, "999"), Reason.OTHER_PID_NAMESPACE);
    }

    @Test
    void row4AnUnreadableBootIsAnIoError() {
        os.boot = Optional.empty();
        assertReason(full(), Reason.IO_ERROR);
    }

    @Test
    void row4AnotherBootIsARebootAndBeatsTheProcess() {
        assertReason(with(PID, START, "boot-0", FakeIntrospector.HOST, FakeIntrospector.PIDNS), Reason.REBOOTED);
        os.put(PID, new ProcessLookup.Unknown(Reason.ACCESS_DENIED, "hidden"));
        assertReason(with(PID, START, "boot-0", "", ""), Reason.REBOOTED);
    }

    @Test
    void row5AProvenlyGoneProcessExited() {
        os.put(PID, new ProcessLookup.Gone("no such file"));
        assertReason(full(), Reason.EXITED);
    }

    @Test
    void row5AProcessThatCannotBeSeenIsUnknownNotDead() {
        for (Reason reason : List.of(Reason.ACCESS_DENIED, Reason.UNSUPPORTED_PLATFORM, Reason.IO_ERROR,
                Reason.OTHER_PID_NAMESPACE)) {
            os.put(PID, new ProcessLookup.Unknown(reason, "because"));
            assertReason(full(), reason);
        }
    }

    @Test
    void row5BeatsAMissingFingerprint() {
        os.put(PID, new ProcessLookup.Gone("gone"));
        assertReason(with(PID, "", "", "", ""), Reason.EXITED);
    }

    @Test
    void row6ABarePidProvesNothing() {
        assertReason(with(PID, "", FakeIntrospector.BOOT, FakeIntrospector.HOST, ""), Reason.NO_FINGERPRINT);
    }

    @Test
    void row6BeatsAZombie() {
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.ZOMBIE)));
        assertReason(with(PID, "", "", "", ""), Reason.NO_FINGERPRINT);
    }

    @Test
    void row7AnotherStartIsAReusedPid() {
        assertReason(with(PID, "4566", "", "", ""), Reason.PID_REUSED);
    }

    @Test
    void row7BeatsAZombie() {
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", "9999", ProcessState.ZOMBIE)));
        assertReason(full(), Reason.PID_REUSED);
    }

    @Test
    void row8AZombieIsDead() {
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.ZOMBIE)));
        assertReason(full(), Reason.ZOMBIE);
    }

    @Test
    void row8ATaskBeingTornDownExited() {
        os.put(PID, new ProcessLookup.Found(new ProcessInfo(PID, 1, "owner", START, ProcessState.DEAD)));
        assertReason(full(), Reason.EXITED);
    }

    @Test
    void row9TheSameProcessIsAlive() {
        assertReason(full(), Reason.MATCHED);
        assertReason(with(PID, START, "", "", ""), Reason.MATCHED);
    }

    @Test
    void anUnsupportedPlatformSaysSoRatherThanBlamingTheHost() {
        LivenessChecker unsupported = LivenessChecker.of(new dev.proclive.platform.UnsupportedProcessIntrospector("Plan 9"));
        assertThat(unsupported.explain(full()).reason()).isEqualTo(Reason.UNSUPPORTED_PLATFORM);
        assertThat(unsupported.explain(with(PID, START, "", "", "")).reason()).isEqualTo(Reason.UNSUPPORTED_PLATFORM);
        assertThat(unsupported.check(full())).isEqualTo(Liveness.UNKNOWN);
        assertThat(unsupported.identify(PID)).isEmpty();
        assertThat(unsupported.current()).isEmpty();
        assertThat(OwnerResolver.builder().introspector(new dev.proclive.platform.UnsupportedProcessIntrospector("Plan 9"))
                .build().resolve()).isEmpty();
    }

    @Test
    void theOsNamePicksTheBackend() {
        assertThat(dev.proclive.platform.Platform.introspector("Linux")).isSameAs(dev.proclive.linux.LinuxProcessIntrospector.system());
        assertThat(dev.proclive.platform.Platform.introspector("Mac OS X")).isSameAs(dev.proclive.macos.MacosProcessIntrospector.system());
        assertThat(dev.proclive.platform.Platform.introspector("Darwin")).isSameAs(dev.proclive.macos.MacosProcessIntrospector.system());
        assertThat(dev.proclive.platform.Platform.introspector("Windows 11")).isInstanceOf(dev.proclive.platform.UnsupportedProcessIntrospector.class);
        assertThat(dev.proclive.platform.Platform.introspector("Windows 11").self()).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.detail()).contains("Windows 11"));
    }

    @Test
    void aChangedHostNameIsSeenOnceTheSecondHasPassed() throws Exception {
        long[] now = {System.nanoTime()};
        LivenessChecker c = LivenessChecker.of(os, () -> now[0]);
        assertThat(c.check(full())).isEqualTo(Liveness.ALIVE);
        os.host = Optional.of("renamed");
        now[0] += LivenessChecker.HOST_TTL_NANOS;
        assertThat(c.check(full())).as("within the second: the name read before").isEqualTo(Liveness.ALIVE);
        now[0] += 1;
        assertThat(c.explain(full()).reason()).isEqualTo(Reason.OTHER_HOST);
        assertThat(c.identify(PID)).map(Identity::host).contains("renamed");
    }

    @Test
    void checkAllReadsHostBootAndNamespaceOnce() {
        int[] reads = new int[3];
        FakeIntrospector counting = new FakeIntrospector() {
            @Override
            public Optional<String> hostName() {
                reads[0]++;
                return super.hostName();
            }

            @Override
            public Optional<String> bootId() {
                reads[1]++;
                return super.bootId();
            }

            @Override
            public Optional<String> pidNamespace() {
                reads[2]++;
                return super.pidNamespace();
            }
        }.process(PID, 1, "owner", START);
        List<Verdict> all = LivenessChecker.of(counting).checkAll(java.util.Collections.nCopies(50, full()));
        assertThat(all).hasSize(50).allSatisfy(v -> assertThat(v.reason()).isEqualTo(Reason.MATCHED));
        assertThat(reads).containsExactly(1, 1, 1);
    }

    @Test
    void anUnknownOsGetsTheUnsupportedIntrospector() {
        assertThat(dev.proclive.platform.Platform.introspector("Plan 9")).isInstanceOf(dev.proclive.platform.UnsupportedProcessIntrospector.class);
        assertThat(dev.proclive.platform.Platform.introspector("")).isInstanceOf(dev.proclive.platform.UnsupportedProcessIntrospector.class);
    }

    @Test
    void checkAllKeepsTheCallersOrderAndReadsEachPidOnce() {
        os.process(7, 1, "seven", "70").put(8, new ProcessLookup.Gone("gone"));
        List<Identity> ids = new ArrayList<>(List.of(
                full(), with(8, "80", "", "", ""), with(7, "70", "", "elsewhere", ""),
                with(7, "71", "", "", ""), with(0, "", "", "", ""), with(7, "70", "", "", "")));
        os.lookups = 0;
        List<Verdict> all = checker.checkAll(ids);
        assertThat(os.lookups).isEqualTo(3); // PID, 8, 7
        List<Verdict> one = ids.stream().map(checker::explain).collect(Collectors.toList());
        assertThat(all).isEqualTo(one);
        assertThat(all).extracting(Verdict::reason).containsExactly(Reason.MATCHED, Reason.EXITED,
                Reason.OTHER_HOST, Reason.PID_REUSED, Reason.NO_IDENTITY, Reason.MATCHED);
    }

    @Test
    void identifyRecordsWhatTheProcessShowsNow() {
        assertThat(checker.identify(PID)).contains(full());
    }

    @Test
    void identifyRefusesWhatCannotBeRecordedSafely() {
        assertThat(checker.identify(0)).isEmpty();
        assertThat(checker.identify(-1)).isEmpty();
        assertThat(checker.identify(999)).isEmpty();
        os.put(9, new ProcessLookup.Found(new ProcessInfo(9, 1, "z", "1", ProcessState.ZOMBIE)));
        assertThat(checker.identify(9)).isEmpty();
        os.host = Optional.empty();
        assertThat(LivenessChecker.of(os).identify(PID)).isEmpty();
    }

    @Test
    void theHostNameIsKeptForAboutASecond() {
        int[] reads = {0};
        FakeIntrospector counting = new FakeIntrospector() {
            @Override
            public Optional<String> hostName() {
                reads[0]++;
                return super.hostName();
            }
        }.process(PID, 1, "owner", START);
        LivenessChecker c = LivenessChecker.of(counting);
        for (int i = 0; i < 100; i++) {
            assertThat(c.check(full())).isEqualTo(Liveness.ALIVE);
        }
        assertThat(reads[0]).isBetween(1, 2);
    }

    @Test
    void identifyLeavesOutWhatThePlatformDoesNotRecord() {
        os.boot = Optional.empty();
        os.pidns = Optional.empty();
        assertThat(checker.identify(PID)).contains(new Identity(PID, START, "", FakeIntrospector.HOST, "owner", ""));
    }

    @Test
    void currentReadsSelf() {
        assertThat(checker.current()).hasValueSatisfying(id -> {
            assertThat(id.pid()).isEqualTo(50);
            assertThat(id.start()).isEqualTo("500");
        });
    }

    /** An introspector that breaks the SPI's contract by throwing. */
    static final class Throwing extends FakeIntrospector {
        @Override
        public ProcessLookup lookup(long pid) {
            throw new IllegalStateException("broken backend");
        }

        @Override
        public ProcessLookup self() {
            throw new IllegalStateException("broken backend");
        }
    }

    @Test
    void aThrowingIntrospectorGivesUnknownNeverAnException() {
        LivenessChecker broken = LivenessChecker.of(new Throwing());
        assertThat(broken.check(full())).isEqualTo(Liveness.UNKNOWN);
        assertThat(broken.explain(full())).satisfies(v -> {
            assertThat(v.reason()).isEqualTo(Reason.IO_ERROR);
            assertThat(v.detail()).contains("broken backend");
        });
        assertThat(broken.checkAll(List.of(full(), with(0, "", "", "", ""))))
                .extracting(Verdict::reason).containsExactly(Reason.IO_ERROR, Reason.NO_IDENTITY);
        assertThat(broken.identify(PID)).isEmpty();
        assertThat(broken.current()).isEmpty();
        List<OwnerResolver.Step> trace = OwnerResolver.builder().introspector(new Throwing()).build().trace();
        assertThat(trace).last().satisfies(s -> assertThat(s.owner()).isEmpty());
        assertThat(trace).last().satisfies(s -> assertThat(s.why()).contains("broken backend"));

        FakeIntrospector hostless = new FakeIntrospector() {
            @Override
            public Optional<String> hostName() {
                throw new IllegalStateException("no host today");
            }
        };
        assertThat(LivenessChecker.of(hostless).checkAll(List.of(full())))
                .singleElement().satisfies(v -> assertThat(v.detail()).contains("no host today"));
    }

    @Test
    void aNullIdentityIsTheCallersBug() {
        assertThatThrownBy(() -> checker.check(null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> checker.explain(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void verdictReasonsBelongToTheirLiveness() {
        // A verdict has no liveness of its own to disagree with: it is its reason's.
        assertThat(Verdict.class.getRecordComponents()).extracting(c -> c.getName()).containsExactly("reason", "detail", "exit");
        assertThatThrownBy(() -> new Verdict(null, "")).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new ProcessLookup.Unknown(Reason.EXITED, ""))
                .isInstanceOf(IllegalArgumentException.class);
        for (Reason r : Reason.values()) {
            assertThat(Verdict.of(r, null).liveness()).isEqualTo(r.liveness());
        }
    }
}
