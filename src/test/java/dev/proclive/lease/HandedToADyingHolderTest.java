package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.internal.Descendants;
import dev.proclive.spi.internal.EnvironmentScan;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * On etcd, a lease granted or handed off to a process that dies at once (alive when the grant or
 * hand-off checked it, gone when the store's exit watch looks) is ended by this store as exited,
 * and the lease returned is told lost: the store keeps the grant, and watches its record, from
 * before that end is written.
 */
class HandedToADyingHolderTest {

    /** The fake host, but one pid is found alive only so many more times, then gone. */
    static final class Dying implements dev.proclive.spi.internal.KernelIntrospector {
        final LeaseLifecycleTest.Host host = new LeaseLifecycleTest.Host();
        final ConcurrentHashMap<Long, AtomicInteger> lookups = new ConcurrentHashMap<>();
        volatile long dyingPid = -1;
        final AtomicInteger aliveFor = new AtomicInteger();

        int lookupsOf(long pid) {
            return lookups.computeIfAbsent(pid, p -> new AtomicInteger()).get();
        }

        @Override
        public ProcessLookup lookup(long pid) {
            lookups.computeIfAbsent(pid, p -> new AtomicInteger()).incrementAndGet();
            if (pid == dyingPid && aliveFor.getAndDecrement() <= 0) {
                return new ProcessLookup.Gone("exited");
            }
            return host.lookup(pid);
        }

        @Override
        public ProcessLookup self() {
            return host.self();
        }

        @Override
        public Optional<String> bootId() {
            return host.bootId();
        }

        @Override
        public Optional<String> hostName() {
            return host.hostName();
        }

        @Override
        public Optional<String> pidNamespace() {
            return host.pidNamespace();
        }

        @Override
        public Optional<String> startFloor() {
            return host.startFloor();
        }

        @Override
        public EnvironmentScan scanEnvironments(String variable, Predicate<String> value, long uid,
                                                Optional<String> startedAfter) {
            return host.scanEnvironments(variable, value, uid, startedAfter);
        }

        @Override
        public EnvironmentScan readEnvironment(long pid, String variable, Predicate<String> value) {
            return host.readEnvironment(pid, variable, value);
        }

        @Override
        public OptionalLong userId(long pid) {
            return host.userId(pid);
        }
    }

    private static LeaseStore store(LivenessChecker checker) throws java.io.IOException {
        return LeaseStore.builder().etcdClient(new FakeEtcd()).prefix("test/").checker(checker)
                .descendants(Descendants.NONE).build();
    }

    /** {@code who} found alive for as many lookups as one verdict takes (the grant's own check), then gone. */
    private static void aliveForOneVerdict(Dying dying, LivenessChecker checker, Identity who) {
        int before = dying.lookupsOf(who.pid());
        assertThat(checker.explain(who).liveness()).isEqualTo(Liveness.ALIVE);
        dying.aliveFor.set(dying.lookupsOf(who.pid()) - before);
        dying.dyingPid = who.pid();
    }

    /** The record ended as exited by the store's exit watch, and {@code lease} told it lost. */
    private static void endedAndToldLost(LeaseStore store, Lease lease) throws Exception {
        assertThat(store.read("build")).hasValueSatisfying(r -> {
            assertThat(r.granted()).as("ended by the exit watch: %s", r).isFalse();
            assertThat(r.ended()).hasValueSatisfying(e -> assertThat(e.how()).isEqualTo(LeaseChange.EXITED));
        });
        assertThat(lease.lost()).as("the lease is told lost once its record shows it ended")
                .succeedsWithin(Eventually.scaled(Duration.ofSeconds(5)))
                .satisfies(lost -> assertThat(lost.record()).isPresent());
        assertThat(lease.knownLost()).isTrue();
    }

    @Test
    void aLeaseGrantedToAHolderThatDiesAtOnceIsToldLost() throws Exception {
        Dying dying = new Dying();
        LivenessChecker checker = LivenessChecker.of(dying);
        try (LeaseStore store = store(checker)) {
            Identity holder = dying.host.start(62, 1, "1003");
            aliveForOneVerdict(dying, checker, holder);
            endedAndToldLost(store, ((Acquisition.Granted) store.acquire("build", holder)).lease());
        }
    }

    @Test
    void theHandedLeaseIsToldLostWhenItsNewHolderDiesAtOnce() throws Exception {
        Dying dying = new Dying();
        LivenessChecker checker = LivenessChecker.of(dying);
        try (LeaseStore store = store(checker)) {
            Identity first = dying.host.start(60, 1, "1001");
            Identity next = dying.host.start(61, 1, "1002");
            Lease lease = ((Acquisition.Granted) store.acquire("build", first)).lease();
            aliveForOneVerdict(dying, checker, next);
            endedAndToldLost(store, lease.handOff(next));
        }
    }
}
