package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Reason;
import dev.proclive.spi.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The lease's life — reserve, hand off, claim, adopt by token, end — and its TTL rules over a
 * process table and a clock the test sets: on every OS, Windows included, without sleeping.
 */
class LeaseLifecycleTest {

    static final String BOOT = "boot-1";
    static final String HOST = "here";
    static final String PIDNS = "4026531836";

    @TempDir
    Path dir;
    final Host host = new Host();
    final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
    LeaseStore store;

    /** A process table, a floor and a scan the test decides. */
    static final class Host implements ProcessIntrospector {
        final Map<Long, ProcessInfo> table = new ConcurrentHashMap<>();
        volatile EnvironmentScan scan = new EnvironmentScan(List.of(), true, "");
        volatile String lastEntry;
        volatile Optional<String> lastStartedAfter;

        Host() {
            table.put(50L, new ProcessInfo(50, 1, "java", "500", ProcessState.LIVE)); // this process
        }

        Identity start(long pid, long ppid, String start) {
            table.put(pid, new ProcessInfo(pid, ppid, "p" + pid, start, ProcessState.LIVE));
            return new Identity(pid, start, BOOT, HOST, "p" + pid, PIDNS);
        }

        void exit(Identity id) {
            table.remove(id.pid());
        }

        @Override
        public ProcessLookup lookup(long pid) {
            ProcessInfo info = table.get(pid);
            return info == null ? new ProcessLookup.Gone("not in the table") : new ProcessLookup.Found(info);
        }

        @Override
        public ProcessLookup self() {
            return lookup(50);
        }

        @Override
        public Optional<String> bootId() {
            return Optional.of(BOOT);
        }

        @Override
        public Optional<String> hostName() {
            return Optional.of(HOST);
        }

        @Override
        public Optional<String> pidNamespace() {
            return Optional.of(PIDNS);
        }

        @Override
        public Optional<String> startFloor() {
            return Optional.of("1000");
        }

        @Override
        public EnvironmentScan scanEnvironments(String entry, Optional<String> startedAfter) {
            lastEntry = entry;
            lastStartedAfter = startedAfter;
            return scan;
        }
    }

    static final class MutableClock extends Clock {
        volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @BeforeEach
    void open() throws IOException {
        store = open(LeasePolicy.defaults());
    }

    private LeaseStore open(LeasePolicy policy) throws IOException {
        return LeaseStore.open(dir.resolve("leases"), policy, LivenessChecker.of(host), clock);
    }

    private static Lease granted(Acquisition a) {
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        return ((Acquisition.Granted) a).lease();
    }

    private Identity elsewhere(long pid) {
        return new Identity(pid, "1", BOOT, "another-host", "remote", PIDNS);
    }

    @Test
    void anUnknownHoldersLeaseIsTakenAfterTheTtlItPromisedWithoutSleeping() throws Exception {
        LeaseStore remote = open(LeasePolicy.builder().ttl(Duration.ofMinutes(2)).build());
        Identity local = host.start(60, 50, "600");
        granted(remote.acquire("build", local));
        // The record now names a holder on another host, renewed at 10:00 with a two-minute promise.
        Path record = dir.resolve("leases/build.lease");
        Files.writeString(record, Files.readString(record).replace("\"host\":\"here\"", "\"host\":\"another-host\""));

        LeaseStore lenient = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build());
        Identity taker = host.start(61, 50, "610");
        clock.now = clock.now.plusSeconds(119);
        Acquisition early = lenient.acquire("build", taker);
        assertThat(early).isInstanceOf(Acquisition.Undecided.class);
        assertThat(((Acquisition.Undecided) early).eligibleAt()).contains(Instant.parse("2026-12-01T10:02:00Z"));
        clock.now = clock.now.plusSeconds(1);
        Acquisition.Granted late = (Acquisition.Granted) lenient.acquire("build", taker);
        LeaseRecord.Takeover previous = late.lease().record().previous().orElseThrow();
        assertThat(previous.verdict().reason()).isEqualTo(Reason.OTHER_HOST);
        assertThat(previous.renewedAt()).contains(Instant.parse("2026-12-01T10:00:00Z"));
        assertThat(previous.at()).isEqualTo(Instant.parse("2026-12-01T10:02:00Z"));
        assertThat(late.lease().fence()).isEqualTo(2);
    }

    @Test
    void aRenewalKeepsThePromisedTtlAndMovesRenewedAt() throws Exception {
        LeaseStore longTtl = open(LeasePolicy.builder().ttl(Duration.ofMinutes(10)).build());
        Lease lease = granted(longTtl.acquire("build", host.start(60, 50, "600")));
        clock.now = clock.now.plusSeconds(5);
        LeaseRecord renewed = store.renew("build", lease.fence());
        assertThat(renewed.ttl()).isEqualTo(Duration.ofMinutes(10));
        assertThat(renewed.renewedAt()).isEqualTo(clock.now);
        assertThat(renewed.acquiredAt()).isEqualTo(clock.now.minusSeconds(5));
    }

    @Test
    void aReservationHasATokenAndAFloorAndIsGrantedAgainToItsReserver() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Acquisition.Granted first = (Acquisition.Granted) store.reserve("build", launcher);
        Lease reserved = first.lease();
        assertThat(first.again()).isFalse();
        assertThat(reserved.state()).isEqualTo(LeaseRecord.State.RESERVED);
        assertThat(reserved.token()).hasValueSatisfying(t -> assertThat(LeaseRecord.isToken(t)).isTrue());
        assertThat(reserved.record().startedAfter()).contains("1000");
        assertThat(reserved.holder()).isEqualTo(launcher);
        Acquisition.Granted again = (Acquisition.Granted) store.reserve("build", launcher);
        assertThat(again.again()).isTrue();
        assertThat(again.lease().fence()).isEqualTo(reserved.fence());
        assertThat(again.lease().token()).isEqualTo(reserved.token());
        Lease other = granted(store.reserve("other", launcher));
        assertThat(other.token()).isNotEqualTo(reserved.token());
    }

    @Test
    void aLiveReserversReservationIsHeld() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        granted(store.reserve("build", launcher));
        Acquisition a = store.acquire("build", host.start(70, 50, "700"));
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) a).record().holder()).isEqualTo(launcher);
        assertThat(host.lastEntry).as("no scan while the reserver lives").isNull();
    }

    @Test
    void whenTheLauncherDiedTheProcessCarryingTheTokenIsAdoptedFenceKept() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        Identity child = host.start(61, 60, "1005");
        host.exit(launcher);
        host.table.put(61L, new ProcessInfo(61, 1, "p61", "1005", ProcessState.LIVE)); // reparented to init
        host.scan = new EnvironmentScan(List.of(host.table.get(61L)), true, "");

        Acquisition a = store.acquire("build", host.start(70, 50, "1100"));
        assertThat(a).isInstanceOf(Acquisition.Held.class);
        assertThat(((Acquisition.Held) a).verdict().liveness()).isEqualTo(Liveness.ALIVE);
        assertThat(host.lastEntry).isEqualTo("PROCLIVE_LEASE_TOKEN=" + reserved.token().orElseThrow());
        assertThat(host.lastStartedAfter).contains("1000");
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(r.holder()).isEqualTo(child);
        assertThat(r.fence()).isEqualTo(reserved.fence());
        assertThat(r.adoptedBy()).contains("token");
        assertThat(r.toJson()).contains("\"adoptedBy\":\"token\"");
    }

    @Test
    void anUnusedReservationIsFreedOnlyByACompleteScanWithTheReserverDead() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        host.exit(launcher);
        Identity newcomer = host.start(70, 50, "1100");

        host.scan = EnvironmentScan.incomplete("pid 9: its environment is not readable by this user");
        Acquisition partial = store.acquire("build", newcomer);
        assertThat(partial).isInstanceOf(Acquisition.Undecided.class);
        assertThat(((Acquisition.Undecided) partial).eligibleAt()).isEmpty();
        assertThat(store.read("build").orElseThrow().state()).isEqualTo(LeaseRecord.State.RESERVED);

        host.scan = new EnvironmentScan(List.of(), true, "");
        Acquisition.Granted free = (Acquisition.Granted) store.acquire("build", newcomer);
        assertThat(free.lease().fence()).isEqualTo(reserved.fence() + 1);
        LeaseRecord.Takeover previous = free.lease().record().previous().orElseThrow();
        assertThat(previous.holder()).isEqualTo(launcher);
        assertThat(previous.verdict().reason()).isEqualTo(Reason.EXITED);
    }

    @Test
    void aReserverOnAnotherHostKeepsItsReservationWhateverTheScanSays() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        granted(store.reserve("build", launcher));
        Path record = dir.resolve("leases/build.lease");
        Files.writeString(record, Files.readString(record).replaceFirst("\"host\":\"here\"", "\"host\":\"another-host\""));
        LeaseStore lenient = open(LeasePolicy.builder().takeUnknownAfterTtl(true).build());
        clock.now = clock.now.plus(Duration.ofDays(1));
        Acquisition a = lenient.acquire("build", host.start(70, 50, "1100"));
        assertThat(a).isInstanceOf(Acquisition.Undecided.class);
        assertThat(((Acquisition.Undecided) a).verdict().reason()).isEqualTo(Reason.OTHER_HOST);
    }

    @Test
    void theChildClaimsItsReservationFenceKept() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        Identity child = host.start(61, 60, "1005");
        String token = reserved.token().orElseThrow();

        Acquisition.Granted claimed = (Acquisition.Granted) store.claim("build", token, child);
        assertThat(claimed.again()).isFalse();
        assertThat(claimed.lease().fence()).isEqualTo(reserved.fence());
        assertThat(claimed.lease().state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(claimed.lease().holder()).isEqualTo(child);
        assertThat(((Acquisition.Granted) store.claim("build", token, child)).again()).isTrue();
        assertThat(reserved.isValid()).as("the reservation is the child's now").isFalse();
        assertThatThrownBy(() -> reserved.handOff(child)).isInstanceOf(LeaseLostException.class);

        Acquisition stranger = store.claim("build", "f".repeat(32), host.start(62, 1, "1006"));
        assertThat(stranger).isInstanceOf(Acquisition.Held.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef", "g123456789abcdef0123456789abcdef",
            "0123456789abcdef0123456789abcdef0"})
    void aTokenThatIsNot32LowercaseHexDigitsIsRefused(String token) throws Exception {
        Identity child = host.start(61, 60, "1005");
        assertThatThrownBy(() -> store.claim("build", token, child)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("32 lowercase hex digits");
        assertThat(dir.resolve("leases/build.lease")).doesNotExist();
    }

    @Test
    void aHandOffKeepsAReservationsFenceAndGivesAHeldLeaseTheNext() throws Exception {
        Identity launcher = host.start(60, 50, "600");
        Lease reserved = granted(store.reserve("build", launcher));
        Identity child = host.start(61, 60, "1005");
        Lease childs = reserved.handOff(child);
        assertThat(childs.fence()).isEqualTo(reserved.fence());
        assertThat(childs.state()).isEqualTo(LeaseRecord.State.HELD);
        assertThat(childs.token()).isEqualTo(reserved.token());
        assertThat(reserved.isValid()).isFalse();
        assertThat(childs.isValid()).isTrue();

        Identity successor = host.start(62, 61, "1010");
        Lease next = childs.handOff(successor);
        assertThat(next.fence()).as("a new writer: the old one's late writes must be refused").isEqualTo(childs.fence() + 1);
        assertThat(childs.isValid()).isFalse();
        assertThat(next.release()).isTrue();
        assertThat(granted(store.acquire("build", successor)).fence()).as("the guard knows the handed-off fence")
                .isEqualTo(next.fence() + 1);

        host.exit(child);
        Lease again = granted(store.reserve("other", launcher));
        assertThatThrownBy(() -> again.handOff(child)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dead");
        assertThat(again.isValid()).isTrue();
    }

    @Test
    void everyEndedGrantSaysHowWithTheHoldersVerdictThen() throws Exception {
        Identity holder = host.start(60, 50, "600");
        Lease lease = granted(store.acquire("build", holder));
        assertThat(lease.release()).isTrue();
        LeaseRecord.Ending released = store.read("build").orElseThrow().ended().orElseThrow();
        assertThat(released.how()).isEqualTo(LeaseRecord.Ending.How.RELEASED);
        assertThat(released.verdict().liveness()).isEqualTo(Liveness.ALIVE);
        assertThat(released.exitCode()).isEmpty();

        Lease second = granted(store.acquire("build", holder));
        assertThat(second.record().ended()).as("a new grant has not ended").isEmpty();
        LeaseRecord broken = store.breakLease("build").orElseThrow();
        assertThat(broken.ended().orElseThrow().how()).isEqualTo(LeaseRecord.Ending.How.BROKEN);
        assertThat(broken.ended().orElseThrow().verdict().liveness()).as("a live holder's lease broken shows as such")
                .isEqualTo(Liveness.ALIVE);
        assertThat(broken.toJson()).contains("\"ended\":{\"how\":\"broken\"", "\"liveness\":\"alive\"");

        Lease third = granted(store.acquire("build", holder));
        host.exit(holder);
        assertThat(third.exited(3)).isTrue();
        LeaseRecord exited = store.read("build").orElseThrow();
        assertThat(exited.ended().orElseThrow().how()).isEqualTo(LeaseRecord.Ending.How.EXITED);
        assertThat(exited.ended().orElseThrow().exitCode()).hasValue(3);
        assertThat(exited.ended().orElseThrow().verdict().reason()).isEqualTo(Reason.EXITED);
        assertThat(exited.toJson()).contains("\"how\":\"exited\"", "\"exitCode\":3");
        assertThat(exited.state()).isEqualTo(LeaseRecord.State.RELEASED);
    }

    @Test
    void aHolderThatIsNotAliveIsAResultNotAnException() throws Exception {
        Identity gone = host.start(60, 50, "600");
        host.exit(gone);
        for (Acquisition a : List.of(store.acquire("build", gone), store.reserve("build", gone),
                store.claim("build", "0".repeat(32), gone))) {
            assertThat(a).isInstanceOf(Acquisition.NotAlive.class);
            assertThat(((Acquisition.NotAlive) a).verdict().reason()).isEqualTo(Reason.EXITED);
        }
        assertThat(dir.resolve("leases/build.lease")).doesNotExist();
    }

    @Test
    void twoProcessesActingForOneHolderShareItAndAreToldSo() throws Exception {
        Identity agent = host.start(60, 50, "600");
        Acquisition.Granted firstHook = (Acquisition.Granted) store.acquire("build", agent);
        Acquisition.Granted secondHook = (Acquisition.Granted) store.acquire("build", agent);
        assertThat(firstHook.again()).isFalse();
        assertThat(secondHook.again()).isTrue();
        assertThat(secondHook.lease().fence()).isEqualTo(firstHook.lease().fence());
    }

    @Test
    void waitingForAHolderEndsWhenItExits() throws Exception {
        Identity holder = host.start(60, 50, "600");
        granted(store.acquire("build", holder));
        Identity newcomer = host.start(70, 50, "700");
        assertThat(store.acquire("build", newcomer, Duration.ZERO)).isInstanceOf(Acquisition.Held.class);
        Thread exiting = new Thread(() -> {
            try {
                Thread.sleep(150);
            } catch (InterruptedException e) {
                return;
            }
            host.exit(holder);
        });
        exiting.start();
        long started = System.nanoTime();
        Acquisition a = store.acquire("build", newcomer, Duration.ofSeconds(20));
        long millis = (System.nanoTime() - started) / 1_000_000;
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(millis).as("woken by the exit, not the deadline").isLessThan(10_000);
        exiting.join();

        Identity third = host.start(80, 50, "800");
        long before = System.nanoTime();
        assertThat(store.acquire("build", third, Duration.ofMillis(300))).isInstanceOf(Acquisition.Held.class);
        assertThat((System.nanoTime() - before) / 1_000_000).as("returns at the deadline").isBetween(250L, 5_000L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"state\":5", "\"state\":\"reserved\"", "\"token\":12", "\"token\":\"abc\"",
            "\"ended\":\"x\"", "\"ended\":{\"how\":\"vanished\",\"at\":\"2026-12-01T10:00:00.000Z\",\"liveness\":\"dead\",\"reason\":\"exited\"}",
            "\"ended\":{\"how\":\"exited\",\"at\":\"2026-12-01T10:00:00.000Z\",\"liveness\":\"dead\",\"reason\":\"exited\",\"exitCode\":\"3\"}",
            "\"adoptedBy\":true"})
    void aFieldOfTheWrongTypeIsCorruptAndChangesNothing(String field) throws Exception {
        Identity holder = host.start(60, 50, "600");
        Lease lease = granted(store.acquire("build", holder));
        lease.release();
        Path record = dir.resolve("leases/build.lease");
        String json = Files.readString(record).strip();
        String key = field.substring(0, field.indexOf(':'));
        String changed = json.contains(key + ":")
                ? json.replaceFirst(java.util.regex.Pattern.quote(key) + ":(\"[^\"]*\"|\\{[^}]*\\}|[0-9]+)",
                        java.util.regex.Matcher.quoteReplacement(field))
                : json.substring(0, json.length() - 1) + "," + field + "}";
        Files.writeString(record, changed);
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class);
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class)
                .isInstanceOf(LeaseException.class);
        assertThat(Files.readString(record)).isEqualTo(changed);
    }

    @Test
    void aRecordWrittenBeforeReservationsStillReads() throws Exception {
        Identity holder = host.start(60, 50, "600");
        Files.createDirectories(dir.resolve("leases"));
        Files.writeString(dir.resolve("leases/build.lease"), "{\"name\":\"build\",\"fence\":4,\"state\":\"held\","
                + "\"holder\":{\"pid\":60,\"start\":\"600\",\"boot\":\"boot-1\",\"host\":\"here\",\"pidns\":\"4026531836\"},"
                + "\"writer\":{\"pid\":60,\"start\":\"600\"},\"acquiredAt\":\"2026-11-29T10:00:00.000Z\","
                + "\"renewedAt\":\"2026-11-29T10:00:00.000Z\",\"ttlMillis\":30000,\"previous\":{\"fence\":3,"
                + "\"holder\":{\"pid\":9,\"start\":\"9\"},\"liveness\":\"dead\",\"reason\":\"exited\",\"detail\":\"\","
                + "\"at\":\"2026-11-29T10:00:00.000Z\"}}\n");
        LeaseRecord r = store.read("build").orElseThrow();
        assertThat(r.token()).isEmpty();
        assertThat(r.ended()).isEmpty();
        assertThat(r.previous().orElseThrow().renewedAt()).isEmpty();
        assertThat(((Acquisition.Granted) store.acquire("build", holder)).again()).isTrue();
    }
}
