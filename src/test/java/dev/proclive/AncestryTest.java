package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The snapshot of a process's ancestors, over a process table in memory: the seed package's newest
 * cases as tables (where a walk is complete, where it is cut; what a match excludes), and what goes
 * beyond the seed (a recycled pid excluded from an incomplete chain too, a DEAD identity nobody's
 * ancestor). On every OS.
 */
class AncestryTest {

    final FakeIntrospector os = new FakeIntrospector();

    /** The calling process is 50 (java); {@code chain} gives each ancestor as pid, ppid, name, start. */
    private Ancestry snapshot(long[]... chain) {
        for (long[] p : chain) {
            os.process(p[0], p[1], "p" + p[0], Long.toString(p[2]));
        }
        return Ancestry.of(LivenessChecker.of(os), 0);
    }

    private static Identity id(long pid, String start) {
        return new Identity(pid, start, FakeIntrospector.BOOT, FakeIntrospector.HOST, "", FakeIntrospector.PIDNS);
    }

    /** java(50) → sh(40) → agent(30) → init(1): complete. */
    private Ancestry toInit() {
        return snapshot(new long[] {40, 30, 400}, new long[] {30, 1, 300}, new long[] {1, 0, 10});
    }

    static Stream<Arguments> walks() {
        return Stream.of(
                // name, the table's rows (pid, ppid, start), expected pids, complete
                Arguments.of("complete at init", new long[][] {{40, 30, 400}, {30, 1, 300}, {1, 0, 10}},
                        List.of(40L, 30L, 1L), true),
                Arguments.of("a parent outside the namespace (ppid 0)", new long[][] {{40, 30, 400}, {30, 0, 300}},
                        List.of(40L, 30L), false),
                Arguments.of("a failed read mid-walk", new long[][] {{40, 30, 400}}, List.of(40L), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("walks")
    void aWalkIsCompleteOnlyWhereItReachedPid1(String name, long[][] table, List<Long> pids, boolean complete) {
        Ancestry a = snapshot(table);
        assertThat(a.chain()).extracting(Identity::pid).containsExactlyElementsOf(pids);
        assertThat(a.complete()).as(name).isEqualTo(complete);
        assertThat(a.chain()).allSatisfy(i -> assertThat(i.start()).isNotEmpty());
    }

    @Test
    void theDepthLimitCutsTheChainAt64AndAChainOf64ThatEndsAtInitIsComplete() {
        long pid = 1000;
        os.self = new ProcessLookup.Found(new ProcessInfo(50, pid, "java", "500", ProcessState.LIVE));
        for (int i = 0; i < 70; i++) {
            os.process(pid - i, pid - i - 1, "shim", Long.toString(10_000 + i));
        }
        Ancestry cut = Ancestry.of(LivenessChecker.of(os), 0);
        assertThat(cut.chain()).hasSize(Ancestry.MAX_DEPTH);
        assertThat(cut.complete()).as("cut by the limit").isFalse();

        FakeIntrospector exact = new FakeIntrospector();
        exact.self = new ProcessLookup.Found(new ProcessInfo(50, 64, "java", "500", ProcessState.LIVE));
        for (long p = 64; p >= 2; p--) {
            exact.process(p, p - 1, "shim", Long.toString(20_000 + p));
        }
        exact.process(1, 0, "init", "1");
        Ancestry atLimit = Ancestry.of(LivenessChecker.of(exact), 0);
        assertThat(atLimit.chain()).hasSize(64);
        assertThat(atLimit.complete()).as("complete at the limit: the 64th is pid 1").isTrue();
    }

    static Stream<Arguments> matches() {
        return Stream.of(
                // name, identity, complete chain's answer: depth (-1 none), excluded; incomplete chain's
                Arguments.of("an ancestor", id(30, "300"), 1, false, 1, false),
                Arguments.of("the parent", id(40, "400"), 0, false, 0, false),
                Arguments.of("a recycled pid", id(30, "299"), -1, true, -1, true),
                Arguments.of("absent", id(77, "770"), -1, true, -1, false),
                Arguments.of("no start", id(30, ""), -1, false, -1, false),
                Arguments.of("no host", new Identity(30, "300", FakeIntrospector.BOOT, "", "", FakeIntrospector.PIDNS),
                        1, false, 1, false),
                Arguments.of("another host", new Identity(30, "300", FakeIntrospector.BOOT, "elsewhere", "",
                        FakeIntrospector.PIDNS), -1, false, -1, false),
                Arguments.of("another boot", new Identity(30, "300", "boot-0", FakeIntrospector.HOST, "",
                        FakeIntrospector.PIDNS), -1, true, -1, true),
                Arguments.of("an empty identity", new Identity(0, "", "", "", "", ""), -1, false, -1, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("matches")
    void matchingIsNeverAGuess(String name, Identity id, int depth, boolean excluded, int cutDepth, boolean cutExcluded) {
        Ancestry complete = toInit();
        assertThat(complete.depthOf(id)).as(name + ", complete").isEqualTo(depth < 0 ? OptionalInt.empty() : OptionalInt.of(depth));
        assertThat(complete.excludes(id)).as(name + ", complete").isEqualTo(excluded);
        assertThat(complete.hasAncestor(id)).isEqualTo(depth >= 0);

        FakeIntrospector cutOs = new FakeIntrospector();
        cutOs.process(40, 30, "p40", "400").process(30, 20, "p30", "300"); // 20 cannot be read: cut there
        cutOs.process(77, 1, "p77", "770"); // alive, not an ancestor: only a complete chain excludes it
        Ancestry cut = Ancestry.of(LivenessChecker.of(cutOs), 0);
        assertThat(cut.complete()).isFalse();
        assertThat(cut.depthOf(id)).as(name + ", cut").isEqualTo(cutDepth < 0 ? OptionalInt.empty() : OptionalInt.of(cutDepth));
        assertThat(cut.excludes(id)).as(name + ", cut").isEqualTo(cutExcluded);
    }

    @Test
    void aMatchSaysItsDepthOrItsReasonAsOptionalsNeverSentinels() {
        Ancestry a = toInit();
        assertThat(a.depthOf(id(30, "300"))).hasValue(1);
        assertThat(a.whyUnknown(id(30, "300"))).as("an ancestor is known").isEmpty();
        assertThat(a.depthOf(id(77, "770"))).isEmpty();
        assertThat(a.whyUnknown(id(77, "770"))).as("absent from a complete chain: known not to be one").isEmpty();
        assertThat(a.whyUnknown(new Identity(30, "300", FakeIntrospector.BOOT, "elsewhere", "", FakeIntrospector.PIDNS)))
                .contains("other_host");
    }

    /** java(50) → sh(40) → inner agent(30) → outer agent(20) → init(1): complete. */
    private Ancestry nested() {
        return snapshot(new long[] {40, 30, 400}, new long[] {30, 20, 300}, new long[] {20, 1, 200},
                new long[] {1, 0, 10});
    }

    @Test
    void theNearestOfSeveralSessionsOwnersIsTheInnerAgent() {
        java.util.Map<String, Identity> owners = new java.util.LinkedHashMap<>();
        owners.put("outer", id(20, "200"));
        owners.put("inner", id(30, "300"));
        owners.put("stranger", id(77, "770"));
        assertThat(nested().nearest(owners)).isEqualTo(new Ancestry.Nearest.Found<>("inner", 1));
    }

    @Test
    void twoKeysOfOneAncestorAreAmbiguousAtItsDepth() {
        java.util.Map<String, Identity> owners = new java.util.LinkedHashMap<>();
        owners.put("outer", id(20, "200"));
        owners.put("a", id(30, "300"));
        owners.put("b", id(30, "300"));
        Ancestry.Nearest<String> n = nested().nearest(owners);
        assertThat(n).isEqualTo(new Ancestry.Nearest.Ambiguous<>(List.of("a", "b"), 1));
    }

    @Test
    void aStrangerAloneIsNoneOnACompleteChain() {
        assertThat(nested().nearest(java.util.Map.of("stranger", id(77, "770"))))
                .isEqualTo(new Ancestry.Nearest.None<String>());
        assertThat(nested().nearest(java.util.Map.<String, Identity>of())).isEqualTo(new Ancestry.Nearest.None<String>());
    }

    @Test
    void onACutChainNoneFoundIsUnknown() {
        os.process(40, 30, "p40", "400").process(30, 20, "p30", "300"); // 20 cannot be read: cut
        Ancestry cut = Ancestry.of(LivenessChecker.of(os), 0);
        assertThat(cut.nearest(java.util.Map.of("stranger", id(77, "770"))))
                .isEqualTo(new Ancestry.Nearest.Unknown<String>("chain_incomplete"));
        assertThat(cut.nearest(java.util.Map.of("inner", id(30, "300"), "stranger", id(77, "770"))))
                .as("one found above nothing unknown nearer").isEqualTo(new Ancestry.Nearest.Found<>("inner", 1));
    }

    @Test
    void anOwnerThatCannotBeJudgedHereIsNeverFound() {
        Identity elsewhere = new Identity(77, "770", FakeIntrospector.BOOT, "other-host", "", FakeIntrospector.PIDNS);
        Identity noStart = new Identity(77, "", FakeIntrospector.BOOT, FakeIntrospector.HOST, "", FakeIntrospector.PIDNS);
        assertThat(nested().nearest(java.util.Map.of("elsewhere", elsewhere, "bare", noStart)))
                .isEqualTo(new Ancestry.Nearest.None<String>());
    }

    /**
     * inner agent (30, no start recorded, or recorded in another PID namespace) is nearer than outer
     * (20): outer is not known to be the nearest, whatever the order of the owners.
     */
    @Test
    void anOwnerThatCannotBeJudgedNamingANearerAncestorMakesTheNearestUnknown() {
        Identity bare = new Identity(30, "", FakeIntrospector.BOOT, FakeIntrospector.HOST, "", FakeIntrospector.PIDNS);
        Identity otherNs = new Identity(30, "300", FakeIntrospector.BOOT, FakeIntrospector.HOST, "", "4026532000");
        for (Identity inner : List.of(bare, otherNs)) {
            java.util.Map<String, Identity> owners = new java.util.LinkedHashMap<>();
            owners.put("outer", id(20, "200"));
            owners.put("inner", inner);
            Ancestry.Nearest<String> n = nested().nearest(owners);
            assertThat(n).as(inner.toString()).isEqualTo(new Ancestry.Nearest.Unknown<String>(
                    inner == bare ? "no_fingerprint" : "other_pid_namespace"));
            java.util.Map<String, Identity> reversed = new java.util.LinkedHashMap<>();
            reversed.put("inner", inner);
            reversed.put("outer", id(20, "200"));
            assertThat(nested().nearest(reversed)).isEqualTo(n);
        }
        // at the found one's own depth too (it may be that process, for another session), and on a
        // complete chain where none was found
        assertThat(nested().nearest(java.util.Map.of("bare", bare))).isEqualTo(new Ancestry.Nearest.Unknown<String>("no_fingerprint"));
        java.util.Map<String, Identity> same = new java.util.LinkedHashMap<>();
        same.put("inner", id(30, "300"));
        same.put("bare", bare);
        assertThat(nested().nearest(same)).isEqualTo(new Ancestry.Nearest.Unknown<String>("no_fingerprint"));
        // farther up than the one found, it changes nothing
        java.util.Map<String, Identity> farther = new java.util.LinkedHashMap<>();
        farther.put("inner", id(30, "300"));
        farther.put("outer", new Identity(20, "", FakeIntrospector.BOOT, FakeIntrospector.HOST, "", FakeIntrospector.PIDNS));
        assertThat(nested().nearest(farther)).isEqualTo(new Ancestry.Nearest.Found<>("inner", 1));
        // an owner of an earlier boot is gone: it names nobody
        Identity earlierBoot = new Identity(30, "300", "an-earlier-boot", FakeIntrospector.HOST, "", FakeIntrospector.PIDNS);
        java.util.Map<String, Identity> rebooted = new java.util.LinkedHashMap<>();
        rebooted.put("outer", id(20, "200"));
        rebooted.put("old", earlierBoot);
        assertThat(nested().nearest(rebooted)).isEqualTo(new Ancestry.Nearest.Found<>("outer", 2));
    }

    @Test
    void aDeadIdentityIsNobodysAncestorEvenAboveTheCut() {
        os.process(40, 30, "p40", "400").process(30, 20, "p30", "300");
        Ancestry cut = Ancestry.of(LivenessChecker.of(os), 0);
        Identity exited = id(88, "880"); // not in the table: gone
        assertThat(cut.excludes(exited)).as("DEAD now, so nobody's ancestor").isTrue();
        assertThat(cut.whyUnknown(exited)).as("known: not an ancestor").isEmpty();
        os.put(89, new ProcessLookup.Found(new ProcessInfo(89, 1, "z", "890", ProcessState.ZOMBIE)));
        assertThat(cut.excludes(id(89, "890"))).as("a zombie is DEAD too").isTrue();
        os.process(90, 1, "alive", "900");
        assertThat(cut.excludes(id(90, "900"))).as("alive and maybe above the cut: not excluded").isFalse();
        assertThat(cut.whyUnknown(id(90, "900"))).contains("chain_incomplete");
    }

    @Test
    void anotherPidNamespacesIdentityIsUnknownNeverNotAnAncestor() {
        Ancestry a = toInit();
        Identity outer = new Identity(30, "300", FakeIntrospector.BOOT, FakeIntrospector.HOST, "", "4026532000");
        assertThat(a.whyUnknown(outer)).contains("other_pid_namespace");
        assertThat(a.excludes(outer)).isFalse();
    }

    @Test
    void aSnapshotReadsOnceAndMatchingReadsNothing() {
        Ancestry a = toInit();
        int reads = os.lookups;
        for (int i = 0; i < 50; i++) {
            a.depthOf(id(30, "300"));
            a.depthOf(id(77, "770"));
        }
        assertThat(os.lookups).isEqualTo(reads);
        assertThat(a.chain()).extracting(Identity::pid).containsExactly(40L, 30L, 1L);
    }

    @Test
    void theOwnerIsTheFirstAncestorTheResolverDoesNotSkipOfTheSameChain() {
        os.process(40, 35, "sh", "400").process(35, 30, "git", "350").process(30, 1, "agent", "300").process(1, 0, "init", "1");
        Ancestry a = Ancestry.of(LivenessChecker.of(os), 0);
        Identity owner = OwnerResolver.builder().introspector(os).build().resolve().orElseThrow();
        assertThat(owner.pid()).as("git is skipped as shells are: a commit hook's owner is the agent").isEqualTo(30);
        assertThat(a.depthOf(owner)).hasValue(2);
    }
}
