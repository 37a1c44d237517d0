package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.OwnerResolver;
import dev.proclive.Reason;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.internal.ProgramNames;
import dev.proclive.spi.ProcessState;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The macOS introspector through a fake sysctl: every verdict without a Mac. */
class MacosProcessIntrospectorTest {

    /** A kernel in memory: pid → the bytes and length sysctl answers, or an errno. */
    static class FakeSysctl implements Sysctl {
        final Map<Integer, byte[]> procs = new HashMap<>();
        final Map<Integer, Integer> lengths = new HashMap<>();
        final Map<Integer, Integer> errnos = new HashMap<>();
        long self = 500;
        String host = "mac.local";
        String uuid = "6B29FC40-CA47-1067-B31D-00DD010662DA";
        int uuidCalls;
        int calls;

        FakeSysctl put(KinfoProcBuilder b) {
            int pid = java.nio.ByteBuffer.wrap(b.bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(KinfoProc.P_PID);
            procs.put(pid, b.bytes);
            return this;
        }

        @Override
        public long getpid() {
            return self;
        }

        @Override
        public int kinfoProc(int pid, byte[] buffer) throws ErrnoException {
            calls++;
            if (errnos.containsKey(pid)) {
                throw new ErrnoException(errnos.get(pid));
            }
            byte[] p = procs.get(pid);
            if (p == null) {
                return 0;
            }
            System.arraycopy(p, 0, buffer, 0, Math.min(p.length, buffer.length));
            return lengths.getOrDefault(pid, p.length);
        }

        final Map<Integer, byte[]> args = new HashMap<>();

        @Override
        public int argMax() {
            return 4096;
        }

        /**
         * Processes that fork the next pid and exit when their arguments are asked for, {@link #reforks}
         * times in all: a chain whose member a scan listed is always gone when it is read.
         */
        final java.util.Set<Integer> reforkOnRead = new java.util.HashSet<>();
        int reforks;

        @Override
        public int procArgs(int pid, byte[] buffer) throws ErrnoException {
            if (reforkOnRead.contains(pid)) {
                procs.remove(pid);
                if (reforks-- > 0) {
                    put(KinfoProcBuilder.process(pid + 1).ppid(1).comm("daemon").start(1_700_000_000L + pid + 1, 5));
                    args.put(pid + 1, ProcArgsTest.procArgs(1, "/usr/bin/daemon", java.util.List.of("daemon"),
                            java.util.List.of("HOME=/")));
                    if (reforks > 0) {
                        reforkOnRead.add(pid + 1);
                    }
                }
                throw new ErrnoException(3); // ESRCH
            }
            byte[] a = args.get(pid);
            if (a == null) {
                throw new ErrnoException(22); // EINVAL: another user's process
            }
            System.arraycopy(a, 0, buffer, 0, a.length);
            return a.length;
        }

        @Override
        public String hostName() {
            return host;
        }

        @Override
        public int[] pids() {
            return procs.keySet().stream().mapToInt(Integer::intValue).toArray();
        }

        @Override
        public String platformUuid() {
            uuidCalls++;
            return uuid;
        }
    }

    @Test
    void aStartIsAFingerprintOnlyAsPercentDPointPercent06dWritesIt() {
        MacosProcessIntrospector m = new MacosProcessIntrospector(new FakeSysctl());
        for (String written : new String[] {"1700000000.000005", "0.000000", "5.123456"}) {
            assertThat(m.isFingerprint(written)).as(written).isTrue();
        }
        for (String unwritten : new String[] {"01700000000.000005", "+1700000000.000005", "1700000000.5",
                "1700000000.0000050", "1700000000", ".000005", "1700000000.-00005", " 1.000000"}) {
            assertThat(m.isFingerprint(unwritten)).as(unwritten).isFalse();
        }
    }

    @Test
    void aScanForATokenReadsTheEnvironmentOfProcessesStartedAfterTheFloor() {
        String value = "0123456789abcdef0123456789abcdef";
        String token = "PROCLIVE_LEASE_TOKEN=" + value;
        sysctl.put(KinfoProcBuilder.process(700).ppid(1).comm("agent").start(1_700_000_700L, 5));
        sysctl.args.put(700, ProcArgsTest.procArgs(1, "/usr/bin/agent", java.util.List.of("agent"), java.util.List.of(token)));
        sysctl.args.put(500, ProcArgsTest.procArgs(1, "/usr/bin/java", java.util.List.of("java"), java.util.List.of(token)));
        // 500, 400 and 300 started before the floor: never read; 700 after it carries the token.
        dev.proclive.spi.internal.EnvironmentScan scan = mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", value::equals, 501, Optional.of("1700000600.000000"));
        assertThat(scan.carriers()).extracting(dev.proclive.spi.ProcessInfo::pid).containsExactly(700L);
        assertThat(scan.complete()).isTrue();
        assertThat(mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", value::equals, 501, Optional.empty()).carriers()).extracting(dev.proclive.spi.ProcessInfo::pid)
                .containsExactlyInAnyOrder(700L, 500L);

        sysctl.put(KinfoProcBuilder.process(701).ppid(1).comm("other").start(1_700_000_701L, 5)); // EINVAL: another user's
        dev.proclive.spi.internal.EnvironmentScan partial = mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", value::equals, 501,
                Optional.of("1700000600.000000"));
        assertThat(partial.complete()).isFalse();
        assertThat(partial.detail()).contains("701");
        assertThat(partial.carriers()).extracting(dev.proclive.spi.ProcessInfo::pid).containsExactly(700L);
        assertThat(mac.startFloor()).hasValueSatisfying(f -> assertThat(f).matches("[0-9]+\\.[0-9]{6}"));
    }

    @Test
    void aCarrierOfAnotherUserIsNeverACarrierAndAVanishedOneAsksForAnotherPass() {
        String value = "0123456789abcdef0123456789abcdef";
        String token = "PROCLIVE_LEASE_TOKEN=" + value;
        sysctl.put(KinfoProcBuilder.process(700).ppid(1).comm("agent").start(1_700_000_700L, 5).uid(502));
        sysctl.args.put(700, ProcArgsTest.procArgs(1, "/usr/bin/agent", java.util.List.of("agent"), java.util.List.of(token)));
        dev.proclive.spi.internal.EnvironmentScan foreign = mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", value::equals, 501,
                Optional.of("1700000600.000000"));
        assertThat(foreign.carriers()).isEmpty();
        assertThat(foreign.complete()).isFalse();
        assertThat(foreign.passAgain()).isFalse();
        assertThat(foreign.detail()).contains("700", "uid 502");
        assertThat(mac.userId(700)).hasValue(502);

        // listed, then gone before it was read: that pass proves nothing; the next one, without it, does
        sysctl.procs.remove(700);
        sysctl.put(KinfoProcBuilder.process(800).ppid(1).comm("daemon").start(1_700_000_800L, 5));
        sysctl.reforkOnRead.add(800);
        sysctl.reforks = 1;
        dev.proclive.spi.internal.EnvironmentScan once = mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", value::equals, 501,
                Optional.of("1700000600.000000"));
        assertThat(once.complete()).as(once.detail()).isTrue();
        assertThat(sysctl.procs).containsKey(801).doesNotContainKey(800);

        // a carrier that re-forks under every pass: never a proof
        sysctl.reforks = 100;
        sysctl.reforkOnRead.add(801);
        dev.proclive.spi.internal.EnvironmentScan chain = mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", v -> true, 501,
                Optional.of("1700000600.000000"));
        assertThat(chain.complete()).isFalse();
        assertThat(chain.passAgain()).isTrue();
        assertThat(chain.detail()).contains("in each of " + dev.proclive.spi.internal.EnvironmentScan.PASSES + " passes");
    }

    @Test
    void underAPartialScanTheUsersReForkingChainStillPassesItAgain() {
        String value = "0123456789abcdef0123456789abcdef";
        sysctl.put(KinfoProcBuilder.process(700).ppid(1).comm("other").start(1_700_000_700L, 5).uid(502));
        sysctl.args.put(700, ProcArgsTest.procArgs(1, "/usr/bin/other", java.util.List.of("other"),
                java.util.List.of("PROCLIVE_LEASE_TOKEN=" + value))); // another user's: partial for good
        sysctl.put(KinfoProcBuilder.process(800).ppid(1).comm("daemon").start(1_700_000_800L, 5).uid(501));
        sysctl.reforkOnRead.add(800);
        sysctl.reforks = 100; // the scanned user's chain ends a generation under every pass
        dev.proclive.spi.internal.EnvironmentScan scan = mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", value::equals, 501,
                Optional.of("1700000600.000000"));
        assertThat(scan.complete()).isFalse();
        assertThat(scan.passAgain()).as("what it forked may carry the token: %s", scan.detail()).isTrue();
        assertThat(scan.detail()).contains("uid 502", "in each of " + dev.proclive.spi.internal.EnvironmentScan.PASSES + " passes");
    }

    @Test
    void aFloorThatIsNoStartTimeSkipsNothingItMakesTheScanIncomplete() {
        for (String floor : java.util.List.of("abc", "1.5", "99999999999999999999")) {
            dev.proclive.spi.internal.EnvironmentScan scan = mac.scanEnvironments("PROCLIVE_LEASE_TOKEN", v -> true, 501,
                    Optional.of(floor));
            assertThat(scan.complete()).as(floor).isFalse();
        }
    }

    @Test
    void oneProcessEnvironmentIsReadForAClaim() {
        String value = "0123456789abcdef0123456789abcdef";
        sysctl.put(KinfoProcBuilder.process(700).ppid(1).comm("agent").start(1_700_000_700L, 5));
        sysctl.args.put(700, ProcArgsTest.procArgs(1, "/usr/bin/agent", java.util.List.of("agent"),
                java.util.List.of("PROCLIVE_LEASE_TOKEN=" + value)));
        assertThat(mac.readEnvironment(700, "PROCLIVE_LEASE_TOKEN", value::equals).carriers())
                .extracting(dev.proclive.spi.ProcessInfo::pid).containsExactly(700L);
        assertThat(mac.readEnvironment(700, "PROCLIVE_LEASE_TOKEN", "f"::equals).carriers()).isEmpty();
        assertThat(mac.readEnvironment(700, "PROCLIVE_LEASE_TOKEN", "f"::equals).complete()).isTrue();
        sysctl.put(KinfoProcBuilder.process(701).ppid(1).comm("other").start(1_700_000_701L, 5)); // EINVAL
        assertThat(mac.readEnvironment(701, "PROCLIVE_LEASE_TOKEN", value::equals).complete()).isFalse();
    }

    @Test
    void programNamesComeFromProcArgs2AndFailuresKnowNone() {
        sysctl.args.put(400, ProcArgsTest.procArgs(2, "/bin/bash", "/bin/sh", "./hook.sh"));
        assertThat(mac.programNames(400)).isEqualTo(new ProgramNames("bash", "sh"));
        assertThat(mac.programNames(300)).isEqualTo(ProgramNames.UNKNOWN);
        assertThat(mac.programNames(-1)).isEqualTo(ProgramNames.UNKNOWN);
    }

    @Test
    void aHookScriptIsSkippedByItsInterpreterOnMacosToo() {
        // 500 java -> 400 "hook.sh" (p_comm is the script's name) -> 300 agent
        sysctl.put(KinfoProcBuilder.process(400).ppid(300).comm("hook.sh").start(1_700_000_400L, 1));
        sysctl.args.put(400, ProcArgsTest.procArgs(2, "/bin/bash", "/bin/sh", "./hook.sh"));
        assertThat(dev.proclive.OwnerResolver.builder().introspector(mac).build().resolve())
                .map(dev.proclive.Identity::pid).contains(300L);
    }

    final FakeSysctl sysctl = new FakeSysctl()
            .put(KinfoProcBuilder.process(500).ppid(400).comm("java").start(1_700_000_500L, 1))
            .put(KinfoProcBuilder.process(400).ppid(300).comm("sh").start(1_700_000_400L, 1))
            .put(KinfoProcBuilder.process(300).ppid(1).comm("node").start(1_700_000_300L, 1))
            .put(KinfoProcBuilder.process(77).start(1_700_000_000L, 42).comm("sleep"));
    final MacosProcessIntrospector mac = new MacosProcessIntrospector(sysctl);
    final LivenessChecker checker = LivenessChecker.of(mac);

    private Identity fakeSleeper() {
        return checker.identify(77).orElseThrow();
    }

    @Test
    void identifiesWithHostAndNoBootOrNamespace() {
        assertThat(fakeSleeper()).isEqualTo(new Identity(77, "1700000000.000042", "", "mac.local", "sleep", "", UUID));
    }

    static final String UUID = "6B29FC40-CA47-1067-B31D-00DD010662DA";

    @Test
    void theHardwareUuidIsTheMachineReadOnce() {
        fakeSleeper();
        checker.check(fakeSleeper());
        assertThat(mac.machineId()).contains(UUID);
        assertThat(sysctl.uuidCalls).isEqualTo(1);
    }

    @Test
    void noHardwareUuidRecordsNoMachineAndOneRecordedIsUnknown() {
        Identity recorded = fakeSleeper();
        sysctl.uuid = null;
        MacosProcessIntrospector blind = new MacosProcessIntrospector(sysctl);
        LivenessChecker c = LivenessChecker.of(blind);
        assertThat(c.identify(77)).get().extracting(Identity::machine).isEqualTo("");
        assertThat(c.explain(recorded).reason()).isEqualTo(Reason.OTHER_HOST);
    }

    @Test
    void theSameProcessIsAlive() {
        assertThat(checker.explain(fakeSleeper()).reason()).isEqualTo(Reason.MATCHED);
    }

    @Test
    void lengthZeroIsExited() {
        Identity id = fakeSleeper();
        sysctl.procs.remove(77);
        assertThat(checker.explain(id).reason()).isEqualTo(Reason.EXITED);
    }

    @Test
    void aZombieIsDead() {
        Identity id = fakeSleeper();
        sysctl.put(KinfoProcBuilder.process(77).start(1_700_000_000L, 42).comm("sleep").stat(KinfoProc.SZOMB));
        assertThat(checker.explain(id).reason()).isEqualTo(Reason.ZOMBIE);
        assertThat(checker.identify(77)).isEmpty();
    }

    @Test
    void anotherStartIsAReusedPid() {
        Identity id = fakeSleeper();
        sysctl.put(KinfoProcBuilder.process(77).start(1_700_000_999L, 42).comm("bash"));
        assertThat(checker.explain(id).reason()).isEqualTo(Reason.PID_REUSED);
    }

    @Test
    void errnosAreUnknownWithTheMatchingReason() {
        Identity id = fakeSleeper();
        sysctl.errnos.put(77, 1);
        assertThat(checker.explain(id).reason()).isEqualTo(Reason.ACCESS_DENIED);
        sysctl.errnos.put(77, 12);
        assertThat(checker.explain(id)).satisfies(v -> {
            assertThat(v.reason()).isEqualTo(Reason.IO_ERROR);
            assertThat(v.detail()).contains("ENOMEM");
        });
        sysctl.errnos.put(77, 3);
        assertThat(checker.explain(id).reason()).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void aFailureWithoutAnErrnoIsNeverGone() {
        Identity id = fakeSleeper();
        sysctl.errnos.put(77, 0);
        assertThat(mac.lookup(77)).isInstanceOf(ProcessLookup.Unknown.class);
        assertThat(checker.explain(id)).satisfies(v -> {
            assertThat(v.reason()).isEqualTo(Reason.IO_ERROR);
            assertThat(v.liveness()).isEqualTo(dev.proclive.Liveness.UNKNOWN);
        });
    }

    @Test
    void aTruncatedOrForeignAnswerIsAnIoErrorNeverDead() {
        Identity id = fakeSleeper();
        sysctl.lengths.put(77, 600);
        assertThat(checker.explain(id).reason()).isEqualTo(Reason.IO_ERROR);
        sysctl.lengths.remove(77);
        sysctl.procs.put(77, KinfoProcBuilder.process(78).bytes);
        assertThat(checker.explain(id).reason()).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void negativeAndHugePidsAreNotFoundWithoutAsking() {
        for (long pid : new long[] {0, -1, Long.MIN_VALUE, 1L << 31, Long.MAX_VALUE}) {
            assertThat(mac.lookup(pid)).isInstanceOf(ProcessLookup.Gone.class);
        }
        assertThat(sysctl.calls).isZero();
        assertThat(checker.identify(Long.MAX_VALUE)).isEmpty();
    }

    @Test
    void jnaThatCannotLoadIsUnknownNeverAnException() {
        Identity id = fakeSleeper();
        MacosProcessIntrospector broken = new MacosProcessIntrospector(new FakeSysctl() {
            @Override
            public int kinfoProc(int pid, byte[] buffer) {
                throw new UnsatisfiedLinkError("Unable to load library 'System'");
            }

            @Override
            public long getpid() {
                throw new NoClassDefFoundError("com/sun/jna/Native");
            }

            @Override
            public String hostName() {
                throw new NoClassDefFoundError("com/sun/jna/Native");
            }
        });
        assertThat(broken.lookup(77)).isInstanceOfSatisfying(ProcessLookup.Unknown.class,
                u -> assertThat(u.reason()).isEqualTo(Reason.UNSUPPORTED_PLATFORM));
        assertThat(broken.self()).isInstanceOf(ProcessLookup.Unknown.class);
        assertThat(broken.hostName()).isEmpty();
        LivenessChecker c = LivenessChecker.of(broken);
        assertThat(c.explain(id).reason()).isEqualTo(Reason.UNSUPPORTED_PLATFORM);
        assertThat(c.identify(77)).isEmpty();
        assertThat(OwnerResolver.builder().introspector(broken).build().resolve()).isEmpty();
    }

    @Test
    void aBootIdCannotBeCheckedHere() {
        Identity withBoot = new Identity(77, "1700000000.000042", "some-boot", "mac.local", "sleep", "");
        assertThat(mac.bootId()).isEmpty();
        assertThat(checker.explain(withBoot).reason()).isEqualTo(Reason.IO_ERROR);
    }

    @Test
    void ownerResolutionWalksEPpid() {
        assertThat(OwnerResolver.builder().introspector(mac).build().resolve())
                .contains(new Identity(300, "1700000300.000001", "", "mac.local", "node", "", UUID));
    }

    @Test
    void selfIsReadThroughGetpid() {
        assertThat(mac.self()).isInstanceOfSatisfying(ProcessLookup.Found.class,
                f -> assertThat(f.info().state()).isEqualTo(ProcessState.LIVE));
    }

    @Test
    void namesLongerThanSixteenBytesMatchTheirTruncation() {
        assertThat(mac.nameMatches("my-long-wrapper-", "my-long-wrapper-script")).isTrue();
        assertThat(mac.nameMatches("my-long-wrapper", "my-long-wrapper-script")).isFalse();
    }
}
