package dev.proclive.lease;

import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.Records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.files.TemporaryName;
import dev.proclive.text.OneLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What fault injection found in the lease, each as it was found: a renewal that shortened a
 * promise, trailing bytes after a record, fences at the end of their range, temporary files left
 * behind or planted, a record rolled back by hand, timestamps Java cannot hold, messages broken
 * over lines, files written with the umask's permissions.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class LeaseHardeningTest {

    @TempDir
    Path tmp;
    Path dir;
    LeaseStore store;
    final Children children = new Children();

    @BeforeEach
    void open() throws IOException {
        dir = tmp.resolve("leases");
        store = LeaseStore.open(dir);
    }

    /** Stores a test opened besides {@link #store}, closed after it. */
    final List<LeaseStore> opened = new ArrayList<>();

    @AfterEach
    void kill() throws InterruptedException {
        // Closed first: a store that keeps grants writes its session file until it is closed, and
        // the temporary directory is removed just after this.
        try {
            opened.forEach(LeaseStore::close);
            store.close();
        } finally {
            children.killAll();
        }
    }

    private LeaseStore opened(LeaseStore store) {
        opened.add(store);
        return store;
    }


    private static Lease granted(Acquisition a) {
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        return ((Acquisition.Granted) a).lease();
    }

    private void writeRecord(LeaseRecord r) throws IOException {
        Files.writeString(dir.resolve(r.name() + ".lease"), LeaseJson.write(r));
    }

    private static LeaseRecord record(Identity holder, long fence, LeaseRecord.State state) {
        Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        return new LeaseRecord("build", fence, state, holder, holder, now, now, Duration.ofSeconds(30), Optional.empty());
    }

    private List<String> temporaryFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList();
        }
    }

    @Test
    void aRenewalKeepsTheTtlTheHolderPromisedUnlessGivenOne() throws Exception {
        Identity holder = children.sleeping();
        LeaseStore longTtl = opened(LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(Duration.ofMinutes(10)).build()).build());
        Lease lease = granted(longTtl.acquire("build", holder));
        assertThat(lease.record().ttl()).isEqualTo(Duration.ofMinutes(10));

        assertThat(store.renew("build", lease.fence()).ttl()).as("renewed by a store with the defaults")
                .isEqualTo(Duration.ofMinutes(10));
        LeaseStore shorter = opened(LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().ttl(Duration.ofSeconds(45)).build()).build());
        assertThat(shorter.renew("build", lease.fence()).ttl()).as("renewed with a TTL given").isEqualTo(Duration.ofSeconds(45));
        assertThat(store.read("build").orElseThrow().ttl()).isEqualTo(Duration.ofSeconds(45));
    }

    @Test
    void onlyAnExplicitTtlIsARenewalTtl() {
        assertThat(LeasePolicy.defaults().renewalTtl()).isEmpty();
        assertThat(LeasePolicy.builder().takeUnknownAfterTtl(true).build().renewalTtl()).isEmpty();
        assertThat(LeasePolicy.builder().ttl(Duration.ofSeconds(30)).build().renewalTtl()).contains(Duration.ofSeconds(30));
        assertThat(LeasePolicy.defaults().ttl()).isEqualTo(Duration.ofSeconds(30));
    }

    @ParameterizedTest
    @ValueSource(strings = {" }{\"fence\":99, garbage", "{}", "x", "\n\n{\"fence\":1}"})
    void anythingAfterTheRecordMakesItCorruptAndChangesNothing(String trailing) throws Exception {
        Identity holder = children.sleeping();
        String json = LeaseJson.write(record(holder, 3, LeaseRecord.State.RELEASED)) + trailing;
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("build.lease"), json);
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class);
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class);
        assertThat(Files.readString(dir.resolve("build.lease"))).isEqualTo(json);
    }

    @Test
    void aRecordFollowedByWhitespaceOnlyStillReads() throws Exception {
        writeRecord(record(children.sleeping(), 3, LeaseRecord.State.RELEASED));
        Files.writeString(dir.resolve("build.lease"), "\n \t\n", java.nio.file.StandardOpenOption.APPEND);
        assertThat(store.read("build").orElseThrow().fence()).isEqualTo(3);
    }

    @Test
    void theGrantAfterTheLastFenceIsRefusedNeverWrapped() throws Exception {
        Identity holder = children.sleeping();
        writeRecord(record(holder, Long.MAX_VALUE, LeaseRecord.State.RELEASED));
        String before = Files.readString(dir.resolve("build.lease"));
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("last fence");
        assertThat(Files.readString(dir.resolve("build.lease"))).isEqualTo(before);
        assertThat(Files.readString(dir.resolve("build.guard"))).as("the guard is left as it was").isEmpty();
        // and every later call still works
        assertThat(store.breakLease("build")).isPresent();
        assertThat(store.read("build").orElseThrow().fence()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void fencesAboveTenToTheEighteenWorkEverywhere() throws Exception {
        Identity holder = children.sleeping();
        long big = 1_000_000_000_000_000_000L; // 19 digits
        writeRecord(record(holder, big, LeaseRecord.State.RELEASED));
        Lease lease = granted(store.acquire("build", holder));
        assertThat(lease.fence()).isEqualTo(big + 1);
        assertThat(Files.readString(dir.resolve("build.guard"))).isEqualTo(Long.toString(big + 1));
        assertThat(store.renew("build", big + 1).fence()).isEqualTo(big + 1);
        assertThat(lease.release()).isTrue();
        assertThat(granted(store.acquire("build", holder)).fence()).as("the guard is read back").isEqualTo(big + 2);
    }

    @Test
    void aGuardBeyondTheRangeIsCorrupt() throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("build.guard"), "9223372036854775808");
        assertThatThrownBy(() -> store.acquire("build", children.sleeping())).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("not a fence");
    }

    @Test
    void theFenceRuleCoversTheWholeRangeAndNothingElse() {
        assertThat(Records.parseFence("0")).hasValue(0);
        assertThat(Records.parseFence("9223372036854775807")).hasValue(Long.MAX_VALUE);
        assertThat(Records.parseFence("1000000000000000000")).hasValue(1_000_000_000_000_000_000L);
        for (String bad : List.of("", "9223372036854775808", "99999999999999999999", "-1", "+1", " 1", "1 ", "1.0",
                "١", "0x10")) {
            assertThat(Records.parseFence(bad)).as(bad).isEmpty();
        }
    }

    @Test
    void aHeldRecordBelowTheGuardsFenceWasRolledBackAndIsCorruptUntilBroken() throws Exception {
        Identity holder = children.sleeping();
        Lease lease = granted(store.acquire("build", holder));
        String old = Files.readString(dir.resolve("build.lease")); // a backup at fence 1
        for (int i = 0; i < 4; i++) {
            lease.release();
            lease = granted(store.acquire("build", holder));
        }
        assertThat(lease.fence()).isEqualTo(5);
        Files.writeString(dir.resolve("build.lease"), old); // restored from the backup
        assertThatThrownBy(() -> store.acquire("build", holder)).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("rolled back");
        assertThatThrownBy(() -> store.renew("build", 1)).isInstanceOf(LeaseCorruptException.class);
        assertThatThrownBy(() -> store.release("build", 1)).isInstanceOf(LeaseCorruptException.class);
        assertThat(Files.readString(dir.resolve("build.lease"))).isEqualTo(old);

        assertThat(store.breakLease("build")).isPresent();
        assertThat(granted(store.acquire("build", holder)).fence()).isEqualTo(6);
    }

    @Test
    @org.junit.jupiter.api.condition.EnabledOnOs(org.junit.jupiter.api.condition.OS.LINUX) // boot ids
    void aRecordRolledBackByAPowerLossNamesAHolderOfAnEarlierBootAndIsTakenAboveTheGuard() throws Exception {
        Identity holder = children.sleeping();
        Lease lease = granted(store.acquire("build", holder));
        for (int i = 0; i < 4; i++) {
            lease.release();
            lease = granted(store.acquire("build", holder));
        }
        assertThat(lease.fence()).isEqualTo(5);
        // What a power loss leaves when the directory was not forced: an older record, of the boot before.
        Identity before = new Identity(holder.pid(), holder.start(), "00000000-1111-2222-3333-444444444444",
                holder.host(), holder.name(), holder.pidns(), holder.machine());
        writeRecord(record(before, 2, LeaseRecord.State.HELD));
        Acquisition.Granted next = (Acquisition.Granted) store.acquire("build", children.sleeping());
        assertThat(next.lease().fence()).as("above the forced guard: fence 5 is never handed out again").isEqualTo(6);
        assertThat(next.lease().record().previous().orElseThrow().verdict().reason()).isEqualTo(dev.proclive.Reason.REBOOTED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"+1000000000-12-31T23:59:59.999Z", "-0001-01-01T00:00:00Z", "+10000-01-01T00:00:00Z"})
    void aTimestampOutsideWhatARecordCanHoldIsCorrupt(String at) throws Exception {
        Identity holder = children.sleeping();
        String json = LeaseJson.write(record(holder, 2, LeaseRecord.State.HELD)).replaceFirst("\"renewedAt\":\"[^\"]*\"",
                "\"renewedAt\":\"" + at + "\"");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("build.lease"), json);
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("renewedAt");
        LeaseStore takesUnknown = opened(LeaseStore.builder().directory(dir).policy(LeasePolicy.builder().takeUnknownAfterTtl(true).build()).build());
        assertThatThrownBy(() -> takesUnknown.acquire("build", children.sleeping())).isInstanceOf(LeaseCorruptException.class);
    }

    @Test
    void aFailedWriteRemovesItsTemporaryFileAndEveryWriterCleansDeadOnes() throws Exception {
        Identity holder = children.sleeping();
        Lease lease = granted(store.acquire("build", holder));
        // A write that fails at the rename (a directory stands where the record goes)...
        store.files().beforeReplace(() -> {
            try {
                Files.delete(dir.resolve("build.lease"));
                Files.createDirectory(dir.resolve("build.lease"));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        for (int i = 0; i < 5; i++) {
            assertThatThrownBy(lease::renew).isInstanceOf(IOException.class);
            Files.delete(dir.resolve("build.lease"));
            Files.writeString(dir.resolve("build.lease"), LeaseJson.write(lease.record()));
        }
        assertThat(temporaryFiles()).as("each failed write removed its own").isEmpty();
        store.files().beforeReplace(() -> { });

        // ...and files left by a writer killed mid-write go with the next write of any kind, once
        // the store looks for them again (every CLEAN_EVERY: at once here).
        store.files().cleanEvery(Duration.ZERO);
        Identity dead = deadProcess();
        Path leftover = dir.resolve(new TemporaryName("build", dead, "0123456789abcdef").toString());
        Path oldStyle = dir.resolve(".build." + dead.pid() + "-" + dead.start() + ".tmp");
        Files.writeString(leftover, "{");
        Files.writeString(oldStyle, "{");
        Path live = dir.resolve(new TemporaryName("build", holder, "fedcba9876543210").toString());
        Files.writeString(live, "{");
        assertThat(lease.renew().fence()).isEqualTo(lease.fence());
        assertThat(temporaryFiles()).containsExactly(live.getFileName().toString());
    }

    @Test
    void deadWritersFilesAreLookedForAtAStoresFirstWriteAndOnceInAWhileNotAtEveryWrite() throws Exception {
        Identity holder = children.sleeping();
        Lease lease = granted(store.acquire("build", holder));
        Identity dead = deadProcess();
        Path deadOfBuild = dir.resolve(new TemporaryName("build", dead, "0123456789abcdef").toString());
        Path deadOfOther = dir.resolve(new TemporaryName("other", dead, "0123456789abcdef").toString());
        Path live = dir.resolve(new TemporaryName("build", holder, "fedcba9876543210").toString());
        for (Path p : List.of(deadOfBuild, deadOfOther, live)) {
            Files.writeString(p, "{");
        }
        for (int i = 0; i < 3; i++) {
            assertThat(lease.renew().fence()).isEqualTo(lease.fence());
        }
        assertThat(temporaryFiles()).as("a write does not list the directory each time")
                .containsExactlyInAnyOrder(deadOfBuild.getFileName().toString(), deadOfOther.getFileName().toString(),
                        live.getFileName().toString());

        // A store's first write looks, for every lease of the directory in one listing.
        try (LeaseStore another = LeaseStore.open(dir)) {
            granted(another.acquire("third", holder));
        }
        assertThat(temporaryFiles()).containsExactly(live.getFileName().toString());

        // A store that wrote before looks again once CLEAN_EVERY has passed (at once here).
        Files.writeString(deadOfBuild, "{");
        assertThat(lease.renew().fence()).isEqualTo(lease.fence());
        assertThat(temporaryFiles()).as("within CLEAN_EVERY").hasSize(2);
        store.files().cleanEvery(Duration.ZERO);
        assertThat(lease.renew().fence()).isEqualTo(lease.fence());
        assertThat(temporaryFiles()).containsExactly(live.getFileName().toString());
    }

    private Identity deadProcess() throws Exception {
        Process p = children.start("sleep", "120");
        Identity id = ProcLive.identify(p.pid()).orElseThrow();
        p.destroyForcibly();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return id;
    }

    @Test
    @EnabledOnOs(OS.LINUX)
    void aPlantedFifoOrDirectoryWhereATemporaryFileWentHangsNothing() throws Exception {
        Identity holder = children.sleeping();
        Identity self = ProcLive.current().orElseThrow();
        Files.createDirectories(dir);
        // Where the old, predictable name of this process's next temporary file was.
        Path fifo = dir.resolve(".build." + self.pid() + "-" + self.start() + ".tmp");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertThat(mkfifo.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(mkfifo.exitValue()).isZero();
        Path deadsDir = dir.resolve(new TemporaryName("build", deadProcess(), "0123456789abcdef").toString());
        Files.createDirectory(deadsDir);

        Lease lease = granted(store.acquire("build", holder)); // would block for ever on the FIFO
        assertThat(lease.renew().fence()).isEqualTo(1);
        assertThat(lease.release()).isTrue();
        assertThat(Files.isDirectory(deadsDir)).as("a directory is skipped, not removed and not fatal").isTrue();
    }

    @Test
    void temporaryNamesAreUnpredictableAndParseBack() {
        Identity w = new Identity(4242, "123456", "", "", "", "");
        TemporaryName a = TemporaryName.of("build", w);
        TemporaryName b = TemporaryName.of("build", w);
        assertThat(a.toString()).matches("\\.build\\.4242-123456\\.[0-9a-f]{16}\\.tmp").isNotEqualTo(b.toString());
        assertThat(TemporaryName.parse(a.toString()).map(TemporaryName::lease)).contains("build");
        assertThat(TemporaryName.parse(".build.4242-123456.tmp").orElseThrow().writer()).isEqualTo(w);
        assertThat(TemporaryName.parse(a.toString())).contains(a);
        assertThat(TemporaryName.parse(new TemporaryName("a.1-2", w, "0123456789abcdef").toString()).orElseThrow().lease())
                .as("a name with a writer's shape in it").isEqualTo("a.1-2");
        assertThat(TemporaryName.parse(".build.99999999999999999999-1.tmp")).isEmpty();
        assertThat(TemporaryName.parse(".build.x-1.tmp")).isEmpty();
        assertThat(a.writtenBy(w)).isTrue();
        assertThat(a.writtenBy(new Identity(4242, "123457", "", "", "", ""))).isFalse();
        // random bits that are all decimal digits are still the random part, not more of the start
        TemporaryName digits = new TemporaryName("build", w, "9818244861966577");
        assertThat(TemporaryName.parse(digits.toString())).contains(digits);
        TemporaryName mac = new TemporaryName("build", new Identity(4242, "1700000000.123456", "", "", "", ""),
                "0123456789012345");
        assertThat(TemporaryName.parse(mac.toString())).contains(mac);
    }

    @Test
    void messagesQuotingWhatWasFoundStayOnOneLine() throws Exception {
        Identity holder = children.sleeping();
        String json = LeaseJson.write(record(holder, 2, LeaseRecord.State.HELD)).replace("\"state\":\"held\"",
                "\"state\":\"held\\nproclive: granted\\u001b[2J\"");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("build.lease"), json);
        assertThatThrownBy(() -> store.read("build")).isInstanceOf(LeaseCorruptException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n").doesNotContain("\u001b")
                        .contains("\\n").contains("\\u001b"));
        assertThatThrownBy(() -> LeaseStore.checkName("a\nb")).satisfies(e -> assertThat(e.getMessage())
                .doesNotContain("\n").contains("\"a\\nb\""));
        assertThat(OneLine.quote("t\"\\\r\t\u0000\u007f\u0085\u2028é")).isEqualTo(
                "\"t\\\"\\\\\\r\\t\\u0000\\u007f\\u0085\\u2028é\"");
    }

    @Test
    void filesAreOwnerOnlyWheneverTheDirectoryIsWhoeverCreatedIt() throws Exception {
        Identity holder = children.sleeping();
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        LeaseStore later = opened(LeaseStore.open(dir)); // did not create it
        Lease lease = granted(later.acquire("build", holder));
        lease.renew();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("build.lease")))).isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("build.guard")))).isEqualTo("rw-------");

        Path shared = Files.createDirectories(tmp.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxr-x"));
        LeaseStore group = opened(LeaseStore.open(shared));
        granted(group.acquire("build", holder));
        assertThat(Files.getPosixFilePermissions(shared.resolve("build.lease")))
                .as("a shared directory gets the umask's permissions").isNotEqualTo(
                        Files.getPosixFilePermissions(dir.resolve("build.lease")));
        assertThat(new String(Files.readAllBytes(shared.resolve("build.guard")), StandardCharsets.US_ASCII)).isEqualTo("1");
    }

    @Test
    void aThreadThatLocksTwiceIsToldNotDeadlocked() throws Exception {
        Identity holder = children.sleeping();
        assertThatThrownBy(() -> store.files().locked("build", g -> store.acquire("build", holder)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("already locked");
        assertThat(granted(store.acquire("build", holder)).fence()).isEqualTo(1);
    }

    /**
     * A holder whose identity is a megabyte (its name) was granted, and its record then read by nobody: every caller
     * was refused the lease as corrupt, even after the holder exited, until a break. An identity a record cannot keep
     * is refused before anything is written; one just within it is granted, ended, broken and taken over.
     */
    @Test
    void anIdentityARecordCannotKeepIsRefusedAndOneWithinItLeavesTheLeaseUsable() throws IOException {
        Identity me = ProcLive.current().orElseThrow();
        Identity huge = new Identity(me.pid(), me.start(), me.boot(), me.host(), "x".repeat(LeaseJson.MAX_RECORD_BYTES),
                me.pidns(), me.machine());

        assertThatThrownBy(() -> store.acquire("big", huge)).isInstanceOf(IOException.class)
                .hasMessageContaining("lease big: the holder's identity takes")
                .hasMessageContaining("more than the 16384 a record keeps for one");
        assertThatThrownBy(() -> store.acquire("big", huge, Duration.ofSeconds(1))).isInstanceOf(IOException.class)
                .hasMessageContaining("lease big: the waiter's identity takes");
        assertThat(dir.resolve("big.lease")).doesNotExist();
        assertThat(dir.resolve("big.queue")).doesNotExist();
        assertThat(store.read("big")).isEmpty();

        Identity within = new Identity(me.pid(), me.start(), me.boot(), me.host(),
                "x".repeat(LeaseJson.MAX_IDENTITY_BYTES - 400), me.pidns(), me.machine());
        Lease first = granted(store.acquire("big", within));
        assertThat(first.release()).isTrue();
        Lease second = granted(store.acquire("big", within));
        assertThat(store.breakLease("big")).isPresent();
        assertThat(second.isValid()).isFalse();
        try (Lease lease = granted(store.acquire("big", me))) { // nobody is shut out
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.fence()).isEqualTo(3);
        }
    }
}
