package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The ancestor walk over a fake process table: self is pid 50, its parent 40. */
class OwnerResolverTest {

    final FakeIntrospector os = new FakeIntrospector();

    private Optional<Identity> resolve(OwnerResolver resolver) {
        return resolver.introspector(os).build().resolve();
    }

    private Optional<Identity> resolve() {
        return resolve(OwnerResolver.builder());
    }

    @Test
    void theParentIsTheOwnerWhenItIsNoShell() {
        os.process(40, 1, "node", "400");
        assertThat(resolve()).contains(new Identity(40, "400", FakeIntrospector.BOOT, FakeIntrospector.HOST,
                "node", FakeIntrospector.PIDNS));
    }

    @Test
    void shellsAndEnvAreSkipped() {
        os.process(40, 30, "sh", "400").process(30, 20, "env", "300").process(20, 10, "bash", "200")
                .process(10, 1, "python3", "100");
        assertThat(resolve()).map(Identity::pid).contains(10L);
    }

    @Test
    void everyDefaultShellIsSkipped() {
        String[] shells = {"sh", "bash", "zsh", "dash", "fish", "ash", "ksh", "mksh", "tcsh", "csh", "env"};
        long pid = 40;
        for (String shell : shells) {
            os.process(pid, pid + 1, shell, "1");
            pid++;
        }
        os.process(pid, 1, "owner", "1");
        assertThat(resolve(OwnerResolver.builder().maxDepth(20))).map(Identity::pid).contains(pid);
    }

    @Test
    void runtimesAreNeverSkippedByDefault() {
        for (String runtime : new String[] {"node", "python3", "java", "bun"}) {
            os.process(40, 1, runtime, "400");
            assertThat(resolve()).map(Identity::name).contains(runtime);
        }
    }

    @Test
    void callerNamedWrappersAreSkipped() {
        os.process(40, 30, "mytool", "400").process(30, 1, "node", "300");
        assertThat(resolve()).map(Identity::name).contains("mytool");
        assertThat(resolve(OwnerResolver.builder().skip("mytool"))).map(Identity::name).contains("node");
    }

    @Test
    void depthCountsAncestorsExamined() {
        os.process(40, 30, "sh", "4").process(30, 20, "sh", "3").process(20, 1, "node", "2");
        assertThat(resolve(OwnerResolver.builder().maxDepth(3))).map(Identity::pid).contains(20L);
        assertThat(resolve(OwnerResolver.builder().maxDepth(2))).isEmpty();
    }

    @Test
    void aWalkOfDepthDReadsDPlusOneStatFiles() {
        os.process(40, 30, "sh", "4").process(30, 20, "bash", "3").process(20, 1, "node", "2");
        os.lookups = 0;
        os.selfReads = 0;
        assertThat(resolve()).isPresent();
        assertThat(os.selfReads + os.lookups).isEqualTo(4);
    }

    @Test
    void reachingInitIsNoOwner() {
        os.process(40, 1, "sh", "400");
        assertThat(resolve()).isEmpty();
        os.process(40, 0, "sh", "400");
        assertThat(resolve()).isEmpty();
    }

    @Test
    void aCycleIsNoOwner() {
        os.process(40, 30, "sh", "4").process(30, 40, "sh", "3");
        assertThat(resolve(OwnerResolver.builder().maxDepth(50))).isEmpty();
        assertThat(os.lookups).isLessThanOrEqualTo(3);
    }

    @Test
    void anUnreadableAncestorIsNoOwner() {
        os.process(40, 30, "sh", "4").put(30, new ProcessLookup.Unknown(Reason.ACCESS_DENIED, "hidden"));
        assertThat(resolve()).isEmpty();
        os.put(30, new ProcessLookup.Gone("exited"));
        assertThat(resolve()).isEmpty();
    }

    @Test
    void aZombieAncestorIsNoOwner() {
        os.put(40, new ProcessLookup.Found(new ProcessInfo(40, 1, "node", "4", ProcessState.ZOMBIE)));
        assertThat(resolve()).isEmpty();
    }

    @Test
    void aZombieShellOnTheWayIsNoOwner() {
        os.put(40, new ProcessLookup.Found(new ProcessInfo(40, 30, "sh", "4", ProcessState.ZOMBIE)))
                .process(30, 1, "node", "3");
        assertThat(resolve()).isEmpty();
    }

    @Test
    void anUnreadableHostIsNoOwner() {
        os.process(40, 1, "node", "400");
        os.host = Optional.empty();
        assertThat(resolve()).isEmpty();
    }

    @Test
    void anUnreadableSelfIsNoOwner() {
        os.process(40, 1, "node", "400");
        os.self = new ProcessLookup.Unknown(Reason.OTHER_PID_NAMESPACE, "foreign /proc");
        assertThat(resolve()).isEmpty();
    }

    @Test
    void badConfigurationIsRefused() {
        assertThatThrownBy(() -> OwnerResolver.builder().maxDepth(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OwnerResolver.builder().maxDepth(Integer.MAX_VALUE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 1 and 4096");
        assertThat(OwnerResolver.builder().maxDepth(OwnerResolver.MAX_DEPTH_LIMIT).build().maxDepth()).isEqualTo(4096);
        assertThatThrownBy(() -> OwnerResolver.builder().skip("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OwnerResolver.builder().skip(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> OwnerResolver.builder().skip((String) null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> OwnerResolver.builder().introspector(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void aScriptRunThroughItsShebangIsSkippedByItsInterpreter() {
        // agent -> ./hook.sh (#!/bin/sh): comm is the script's name, the executable dash.
        os.process(40, 30, "hook.sh", "4").names(40, "dash", "hook.sh").process(30, 1, "python3", "3");
        assertThat(resolve()).map(Identity::pid).contains(30L);
    }

    @Test
    void anArgv0InTheSkipSetIsSkippedToo() {
        // busybox's sh: the executable is busybox, argv[0] /bin/sh.
        os.process(40, 30, "hook", "4").names(40, "busybox", "sh").process(30, 1, "agent", "3");
        assertThat(resolve()).map(Identity::pid).contains(30L);
    }

    @Test
    void anUnreadableExecutableIsNoReasonToStop() {
        os.process(40, 30, "hook.sh", "4").names(40, "", "sh").process(30, 1, "agent", "3").names(30, "", "");
        assertThat(resolve()).map(Identity::pid).contains(30L);
    }

    @Test
    void everyDefaultLauncherAndShimIsSkipped() {
        String[] launchers = {"pwsh", "time", "timeout", "nice", "nohup", "setsid", "stdbuf", "sudo", "su", "doas",
            "runuser", "setpriv", "xargs", "flock", "ionice", "chrt", "taskset", "tini", "dumb-init", "catatonit",
            "s6-svscan", "git"};
        for (String launcher : launchers) {
            os.process(40, 30, launcher, "4").process(30, 1, "agent", "3");
            assertThat(resolve()).as(launcher).map(Identity::pid).contains(30L);
        }
    }

    @Test
    void otherNamesAreReadOnlyForACandidateOwner() {
        os.process(40, 30, "sh", "4").process(30, 20, "bash", "3").process(20, 1, "node", "2");
        assertThat(resolve()).map(Identity::pid).contains(20L);
        assertThat(os.programNameReads).isEqualTo(1);
    }

    @Test
    void pid1OfAContainerIsACandidateAndTheWalkEndsThere() {
        os.pidns = Optional.of("4026532999");
        os.process(40, 1, "sh", "4").process(1, 0, "agent", "1");
        assertThat(resolve()).map(Identity::pid).contains(1L);

        os.process(1, 0, "tini", "1");
        assertThat(resolve()).isEmpty();
        os.process(1, 0, "sh", "1");
        assertThat(resolve()).isEmpty();
    }

    @Test
    void pid1OfTheInitialNamespaceIsNeverAnOwner() {
        os.process(40, 1, "sh", "4").process(1, 0, "agent", "1");
        assertThat(resolve()).isEmpty();
        assertThat(os.table).containsKey(1L);
    }

    @Test
    void resolveForWalksFromTheGivenProcess() {
        os.process(70, 60, "python3", "7").process(60, 40, "sh", "6").process(40, 1, "agent", "4");
        OwnerResolver resolver = OwnerResolver.builder().introspector(os).build();
        assertThat(resolver.resolveFor(70)).map(Identity::pid).contains(40L);
        assertThat(resolver.resolveFor(999)).isEmpty();
        assertThat(resolver.resolveFor(0)).isEmpty();
        assertThat(resolver.resolveFor(-1)).isEmpty();
    }

    @Test
    void aTraceSaysWhyForEveryStep() {
        os.process(40, 30, "hook.sh", "4").names(40, "dash", "/bin/sh".substring(5)).process(30, 20, "sh", "3")
                .process(20, 1, "python3", "2").names(20, "python3.11", "python3");
        List<OwnerResolver.Step> trace = OwnerResolver.builder().introspector(os).build().trace();
        assertThat(trace.get(3).owner()).map(Identity::pid).contains(20L);
        assertThat(trace.subList(0, 3)).allSatisfy(s -> assertThat(s.owner()).isEmpty());
        assertThat(trace).extracting(OwnerResolver.Step::pid).containsExactly(50L, 40L, 30L, 20L);
        assertThat(trace).extracting(OwnerResolver.Step::outcome).containsExactly(
                OwnerResolver.Step.Outcome.START, OwnerResolver.Step.Outcome.SKIPPED,
                OwnerResolver.Step.Outcome.SKIPPED, OwnerResolver.Step.Outcome.OWNER);
        assertThat(trace.get(1).why()).contains("executable \"dash\"");
        assertThat(trace.get(1).executable()).isEqualTo("dash");
        assertThat(trace.get(2).why()).contains("name \"sh\"");
        assertThat(trace.get(3).executable()).isEqualTo("python3.11");
        assertThat(trace.get(1)).as("a step reads as --trace prints it, not as a record dump")
                .hasToString("skipped  40 hook.sh (exe dash, argv0 sh): " + trace.get(1).why());
        assertThat(trace.get(3).toString()).startsWith("owner    20 python3 (exe python3.11");
        assertThat(trace).allSatisfy(s -> assertThat(s.toString()).doesNotContain("Step[", "Optional").doesNotContain("\n"));
    }

    @Test
    void onlyTheOwnersStepNamesTheOwner() {
        Identity someone = new Identity(20, "2", FakeIntrospector.BOOT, FakeIntrospector.HOST, "", FakeIntrospector.PIDNS);
        assertThatThrownBy(() -> new OwnerResolver.Step(20, "node", "", "", OwnerResolver.Step.Outcome.OWNER, "why",
                Optional.empty())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new OwnerResolver.Step(20, "sh", "", "", OwnerResolver.Step.Outcome.SKIPPED, "why",
                Optional.of(someone))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTraceSaysWhereAndWhyAWalkStopped() {
        os.process(40, 30, "sh", "4").process(30, 20, "sh", "3").process(20, 1, "sh", "2");
        OwnerResolver resolver = OwnerResolver.builder().introspector(os).maxDepth(2).build();
        List<OwnerResolver.Step> trace = resolver.trace();
        OwnerResolver.Step last = trace.get(trace.size() - 1);
        assertThat(last.owner()).isEmpty();
        assertThat(last.outcome()).isEqualTo(OwnerResolver.Step.Outcome.STOPPED);
        assertThat(last.pid()).isEqualTo(20L);
        assertThat(last.why()).contains("depth limit (2");

        assertThat(OwnerResolver.builder().introspector(os).build().trace())
                .last().satisfies(s -> assertThat(s.why()).contains("init"));
        assertThat(resolver.traceFor(-3)).singleElement()
                .satisfies(s -> assertThat(s.outcome()).isEqualTo(OwnerResolver.Step.Outcome.STOPPED));
        os.put(30, new ProcessLookup.Unknown(Reason.ACCESS_DENIED, "hidden by hidepid"));
        assertThat(resolver.trace()).last().satisfies(s -> assertThat(s.why()).contains("hidden by hidepid"));
    }

    private OwnerResolver.Step lastStep(OwnerResolver resolver) {
        List<OwnerResolver.Step> trace = resolver.trace();
        OwnerResolver.Step last = trace.get(trace.size() - 1);
        assertThat(last.owner()).isEmpty();
        assertThat(last.outcome()).isEqualTo(OwnerResolver.Step.Outcome.STOPPED);
        return last;
    }

    @Test
    void everyStopIsTracedWithItsReason() {
        OwnerResolver resolver = OwnerResolver.builder().introspector(os).build();
        os.process(40, 0, "sh", "4");
        assertThat(lastStep(resolver)).satisfies(s -> {
            assertThat(s.pid()).isZero();
            assertThat(s.why()).contains("top of the process tree");
        });
        os.process(40, 30, "sh", "4").process(30, 40, "sh", "3");
        assertThat(lastStep(resolver).why()).contains("cycle");
        os.put(30, new ProcessLookup.Gone("it went away"));
        assertThat(lastStep(resolver).why()).contains("cannot read it: it went away");
        os.put(30, new ProcessLookup.Gone(""));
        assertThat(lastStep(resolver).why()).contains("cannot read it: it is gone");
        os.put(30, new ProcessLookup.Unknown(Reason.ACCESS_DENIED, ""));
        assertThat(lastStep(resolver).why()).contains("ACCESS_DENIED");
        os.put(30, new ProcessLookup.Found(new ProcessInfo(30, 1, "node", "3", ProcessState.ZOMBIE)));
        assertThat(lastStep(resolver)).satisfies(s -> {
            assertThat(s.pid()).isEqualTo(30);
            assertThat(s.why()).contains("node has exited");
        });
        os.process(30, 1, "node", "3");
        os.host = Optional.empty();
        assertThat(lastStep(resolver)).satisfies(s -> {
            assertThat(s.name()).isEqualTo("node");
            assertThat(s.why()).contains("host's name cannot be read");
        });
        os.self = new ProcessLookup.Unknown(Reason.IO_ERROR, "no /proc/self");
        assertThat(lastStep(resolver).why()).contains("cannot start there: no /proc/self");
        os.self = new ProcessLookup.Found(new ProcessInfo(50, 40, "java", "500", ProcessState.ZOMBIE));
        assertThat(resolver.resolve()).isEmpty();
    }

    @Test
    void aContainerEntryPointThatIsAShimStopsTheWalkAndSaysWhy() {
        os.pidns = Optional.of("4026532999");
        os.process(40, 1, "sh", "4").process(1, 0, "tini", "1");
        OwnerResolver.Step last = lastStep(OwnerResolver.builder().introspector(os).build());
        assertThat(last.pid()).isEqualTo(1);
        assertThat(last.name()).isEqualTo("tini");
        assertThat(last.why()).contains("pid 1 of this container", "\"tini\"");
        os.process(1, 0, "agent", "1");
        List<OwnerResolver.Step> owned = OwnerResolver.builder().introspector(os).build().trace();
        assertThat(owned.get(owned.size() - 1).owner()).map(Identity::pid).contains(1L);
        assertThat(owned).last().satisfies(s -> assertThat(s.why()).contains("entry point"));
    }

    @Test
    void aTraceForABadPidAsksNothing() {
        OwnerResolver resolver = OwnerResolver.builder().introspector(os).build();
        os.lookups = 0;
        for (long pid : new long[] {0, -1}) {
            List<OwnerResolver.Step> trace = resolver.traceFor(pid);
            assertThat(trace).singleElement().satisfies(s -> assertThat(s.owner()).isEmpty());
            assertThat(trace).singleElement().satisfies(s -> assertThat(s.why()).contains("no process has pid"));
        }
        assertThat(os.lookups).isZero();
        os.process(70, 40, "python3", "7").process(40, 1, "agent", "4");
        assertThat(resolver.traceFor(70)).extracting(OwnerResolver.Step::outcome)
                .containsExactly(OwnerResolver.Step.Outcome.START, OwnerResolver.Step.Outcome.OWNER);
        assertThat(resolver.traceFor(70).get(0).why()).contains("asked about");
    }

    @Test
    void aSkipByNameSaysSo() {
        os.process(40, 30, "sh", "4").process(30, 1, "node", "3");
        assertThat(OwnerResolver.builder().introspector(os).build().trace().get(1).why())
                .isEqualTo("its name \"sh\" is in the skip set");
    }

    @Test
    void depthLimitsAtTheirBounds() {
        assertThat(OwnerResolver.builder().maxDepth(1).build().maxDepth()).isEqualTo(1);
        assertThatThrownBy(() -> OwnerResolver.builder().maxDepth(4097)).isInstanceOf(IllegalArgumentException.class);
        os.process(40, 1, "node", "4");
        assertThat(resolve(OwnerResolver.builder().maxDepth(1))).map(Identity::pid).contains(40L);
    }

    @Test
    void toStringShowsTheConfiguration() {
        assertThat(OwnerResolver.builder().skip("mytool").maxDepth(7).build().toString())
                .contains("mytool", "sh", "maxDepth=7");
    }

    @Test
    void aSettingReturnsACopyAndLeavesTheResolverItWasCalledOnAsItWas() {
        os.process(40, 30, "mytool", "400");
        os.process(30, 1, "node", "300");
        var shared = OwnerResolver.builder().introspector(os);

        var skipping = shared.skip("mytool");
        var shallow = shared.maxDepth(1);
        var elsewhere = shared.introspector(new FakeIntrospector());

        assertThat(skipping).isNotSameAs(shared);
        assertThat(skipping.build().resolve()).map(Identity::pid).contains(30L);
        assertThat(shallow.build().maxDepth()).isEqualTo(1);
        assertThat(elsewhere.build().resolve()).isEmpty();
        // the resolver every setting was called on is the one it was, and so is the one every chain starts from
        assertThat(shared.build().skipNames()).doesNotContain("mytool");
        assertThat(shared.build().maxDepth()).isEqualTo(OwnerResolver.DEFAULT_MAX_DEPTH);
        assertThat(shared.build().resolve()).map(Identity::pid).contains(40L);
        assertThat(OwnerResolver.builder().build().skipNames()).doesNotContain("mytool");
        assertThat(OwnerResolver.builder().build().maxDepth()).isEqualTo(OwnerResolver.DEFAULT_MAX_DEPTH);
        assertThat(shared.build()).isSameAs(shared.build());
    }

    @Test
    void theDefaultsAreTheDocumentedOnes() {
        OwnerResolver r = OwnerResolver.builder().build();
        assertThat(r.maxDepth()).isEqualTo(12);
        assertThat(r.skipNames()).contains("sh", "bash", "zsh", "dash", "fish", "ash", "ksh", "mksh",
                "tcsh", "csh", "env").doesNotContain("node", "python3", "java", "bun");
    }
}
