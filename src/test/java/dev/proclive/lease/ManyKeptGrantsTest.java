package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.core.LeaseKeeper;
import dev.proclive.lease.core.Pause;
import dev.proclive.lease.files.LeaseFiles;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.Descendants;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store keeping many grants on a directory looks at all of them in one look a tick, and reads
 * only the records that changed since it last read them: holding costs what the changes cost, not
 * what the grants number. A change by another writer to one of them is still told within a second.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class ManyKeptGrantsTest {

    @TempDir
    Path tmp;

    @Test
    void oneLookATickReadsOnlyWhatChangedAndABreakOfOneOf200IsToldWithinASecond() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Counting book = new Counting(LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker()));
        // renewed every 20 s: none is renewed while this test looks
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(60)).build();
        int many = 200;
        try (LeaseKeeper keeper = new LeaseKeeper(book, policy, self, LivenessChecker.system(), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < many; i++) {
                leases.add(((Acquisition.Granted) keeper.acquire("lease-" + i, self)).lease());
            }
            // the first look over all of them reads each once (nothing was read of them yet)
            int acquired = book.reads.get();
            Eventually.until("two looks over every kept record", Duration.ofSeconds(10),
                    () -> book.stamps.get() >= 2 * many || book.reads.get() - acquired >= 2 * many);

            int readsBefore = book.reads.get();
            int stampsBefore = book.stamps.get();
            Eventually.until("eight more looks over all of them", Duration.ofSeconds(20),
                    () -> book.stamps.get() - stampsBefore >= 8 * many || book.reads.get() - readsBefore >= 8 * many);
            int reads = book.reads.get() - readsBefore;
            assertThat(reads).as("records read in eight looks at %d records nobody changed", many).isLessThan(many / 4);

            // another writer breaks one of them
            int readsAtBreak = book.reads.get();
            try (LeaseStore operator = LeaseStore.open(tmp.resolve("leases"))) {
                assertThat(operator.breakLease("lease-57")).isPresent();
            }
            long broken = System.nanoTime();
            LeaseLost lost = leases.get(57).lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            long toldMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - broken);
            assertThat(lost.why()).isEqualTo(LeaseChange.BROKEN);
            assertThat(toldMillis).as("told within a second (scaled to this machine)")
                    .isLessThanOrEqualTo(Eventually.scaled(Duration.ofSeconds(1)).toMillis());
            assertThat(book.reads.get() - readsAtBreak).as("records read to tell it").isLessThan(many / 4);
            for (int i = 0; i < many; i++) {
                if (i != 57) {
                    assertThat(leases.get(i).lost()).as("lease-%d", i).isNotDone();
                    leases.get(i).ensureValid();
                }
            }
        }
    }

    @Test
    void recordsThisStoreWroteAreNotReadBackByItsLooks() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        Counting book = new Counting(LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker()));
        // renewed every 2 s
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(6)).build();
        int many = 50;
        try (LeaseKeeper keeper = new LeaseKeeper(book, policy, self, LivenessChecker.system(), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < many; i++) {
                leases.add(((Acquisition.Granted) keeper.acquire("lease-" + i, self)).lease());
            }
            int readsBefore = book.reads.get();
            int writesBefore = book.writes.get();
            int stampsBefore = book.stamps.get();
            Eventually.until("every grant renewed twice, and looked at after", Duration.ofSeconds(30),
                    () -> book.writes.get() - writesBefore >= 2 * many && book.stamps.get() - stampsBefore >= 12 * many);
            assertThat(book.reads.get() - readsBefore)
                    .as("records read while this store granted them and renewed them %d times", book.writes.get() - writesBefore)
                    .isLessThan(many / 4);
            for (Lease lease : leases) {
                assertThat(lease.lost()).as(lease.name()).isNotDone();
            }

            // another writer's change is still read, and told
            try (LeaseStore operator = LeaseStore.open(tmp.resolve("leases"))) {
                assertThat(operator.breakLease("lease-7")).isPresent();
            }
            assertThat(leases.get(7).lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)
                    .why()).isEqualTo(LeaseChange.BROKEN);
        }
    }

    @Test
    void renewalsComingDueCloseTogetherAreWrittenInOnePass() throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        LeaseBook book = LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker());
        // renewed every 5 s; a renewal due within a second of a pass is taken into it
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(15)).build();
        try (LeaseKeeper keeper = new LeaseKeeper(book, policy, self, LivenessChecker.system(), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            for (int i = 0; i < 20; i++) {
                keeper.acquire("warm-" + i, self); // what a first grant loads, loaded
            }
            Lease first = ((Acquisition.Granted) keeper.acquire("first", self)).lease();
            long firstAt = System.nanoTime();
            Eventually.until("400 ms apart", Duration.ofSeconds(5), () -> System.nanoTime() - firstAt >= 400_000_000L);
            Lease second = ((Acquisition.Granted) keeper.acquire("second", self)).lease();
            long apart = Duration.between(first.record().renewedAt(), second.record().renewedAt()).toMillis();
            org.junit.jupiter.api.Assumptions.assumeTrue(apart <= 850,
                    "the machine took " + apart + " ms between two grants: near the second a pass takes in");
            Eventually.until("both renewed", Duration.ofSeconds(20),
                    () -> book.read("first").orElseThrow().renewedAt().isAfter(first.record().renewedAt())
                            && book.read("second").orElseThrow().renewedAt().isAfter(second.record().renewedAt()));
            long between = Math.abs(Duration.between(book.read("first").orElseThrow().renewedAt(),
                    book.read("second").orElseThrow().renewedAt()).toMillis());
            assertThat(between).as("ms between the two renewals of grants made %d ms apart", apart)
                    .isLessThan(apart / 2);
        }
    }

    /** A directory's book that counts what its store reads of it, and how often it asks what changed. */
    static final class Counting implements LeaseBook {
        final LeaseBook real;
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger stamps = new AtomicInteger();
        final AtomicInteger writes = new AtomicInteger();

        Counting(LeaseBook real) {
            this.real = real;
        }

        @Override
        public Optional<LeaseRecord> read(String name) throws IOException {
            reads.incrementAndGet();
            return real.read(name);
        }

        @Override
        public Optional<Object> stamp(String name) throws IOException {
            stamps.incrementAndGet();
            return real.stamp(name);
        }

        @Override
        public Optional<Object> writtenStamp(String name, long fence) {
            return real.writtenStamp(name, fence);
        }

        @Override
        public <T> T locked(String name, Locked<T> work) throws IOException {
            writes.incrementAndGet();
            return real.locked(name, work);
        }

        @Override
        public List<Grant> grants() throws IOException {
            return real.grants();
        }

        @Override
        public Map<String, String> environment() {
            return real.environment();
        }

        @Override
        public Optional<CompletableFuture<Void>> changed(String name) {
            return real.changed(name);
        }

        @Override
        public boolean lost(String name, long fence) {
            return real.lost(name, fence);
        }

        @Override
        public java.util.OptionalLong highestFence(String name) throws IOException {
            return real.highestFence(name);
        }

        @Override
        public void close() {
            real.close();
        }
    }
}
