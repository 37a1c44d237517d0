package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The ancestor walk over a fake process table: self is pid 50, its parent 40. */
class OwnerResolverTest {

    final FakeIntrospector os = new FakeIntrospector();

    private Optional<Identity> resolve(OwnerResolver.Builder builder) {
        return builder.introspector(os).build().resolve();
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
    void theDefaultsAreTheDocumentedOnes() {
        OwnerResolver r = OwnerResolver.builder().build();
        assertThat(r.maxDepth()).isEqualTo(12);
        assertThat(r.skipNames()).contains("sh", "bash", "zsh", "dash", "fish", "ash", "ksh", "mksh",
                "tcsh", "csh", "env").doesNotContain("node", "python3", "java", "bun");
    }
}
