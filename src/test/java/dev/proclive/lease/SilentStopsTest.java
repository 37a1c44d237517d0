package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.core.LeaseEngine;
import dev.proclive.lease.core.Pause;
import dev.proclive.etcd.Etcd;
import dev.proclive.lease.files.LeaseFiles;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.Descendants;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * No background task stops silently: an {@code Error} (an {@code OutOfMemoryError} the application
 * lives through, an {@code AssertionError}) thrown in one run of the store's own periodic work or in
 * a listener ends neither that work nor the delivery to the listener.
 */
class SilentStopsTest {

    @TempDir
    Path tmp;

    private static Identity self() {
        return ProcLive.current().orElseThrow();
    }

    @Test
    void aListenerThatThrowsAnErrorIsStillToldEveryLaterChange() throws Exception {
        try (LeaseStore store = LeaseStore.open(tmp.resolve("leases"))) {
            List<LeaseChange> heard = new CopyOnWriteArrayList<>();
            try (AutoCloseable w = store.watch("build", e -> {
                heard.add(e.kind());
                if (heard.size() == 1) {
                    throw new OutOfMemoryError("thrown by the listener, as an application that lives on meets it");
                }
                if (heard.size() == 3) {
                    throw new AssertionError("an assert in the listener");
                }
            })) {
                for (int round = 0; round < 3; round++) {
                    Lease lease = ((Acquisition.Granted) store.acquire("build", self())).lease();
                    int granted = 2 * round + 1;
                    Eventually.until("event " + granted + " heard", Duration.ofSeconds(10), () -> heard.size() >= granted);
                    lease.release();
                    Eventually.until("event " + (granted + 1) + " heard", Duration.ofSeconds(10), () -> heard.size() >= granted + 1);
                }
            }
            assertThat(heard).containsExactly(LeaseChange.GRANTED, LeaseChange.RELEASED, LeaseChange.GRANTED,
                    LeaseChange.RELEASED, LeaseChange.GRANTED, LeaseChange.RELEASED);
        }
    }

    @Test
    void anErrorInALookEndsItNotLostIsToldAfterABreak() throws Exception {
        Identity self = self();
        LeaseFiles files = LeaseFiles.open(tmp.resolve("leases"), self, id -> false, false, Platform.fileLocker());
        ErrorOnce book = new ErrorOnce(files);
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(3)).build();
        try (LeaseEngine keeper = new LeaseEngine(book, policy, self, LivenessChecker.system(), Clock.systemUTC(), Pause.REAL,
                Descendants.NONE)) {
            Lease lease = ((Acquisition.Granted) keeper.acquire("build", self)).lease();
            book.armed.set(true);
            Eventually.until("an Error thrown in a look", Duration.ofSeconds(30), book.lookThrew::get);
            try (LeaseStore operator = LeaseStore.open(tmp.resolve("leases"))) {
                assertThat(operator.breakLease("build")).isPresent();
            }
            LeaseLost lost = lease.lost().get(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(lost.why()).isEqualTo(LeaseChange.BROKEN);
        }
    }

    @Test
    void anErrorInAnEtcdKeepAliveEndsItNot() throws Exception {
        FakeEtcd fake = new FakeEtcd();
        AtomicBoolean armed = new AtomicBoolean();
        AtomicInteger thrownAt = new AtomicInteger(-1);
        Etcd failingOnce = (Etcd) Proxy.newProxyInstance(Etcd.class.getClassLoader(), new Class<?>[] {Etcd.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("keepAlive") && armed.get() && thrownAt.compareAndSet(-1, fake.keepAlives.get())) {
                        throw new OutOfMemoryError("thrown in one keep-alive, as an application that lives on meets it");
                    }
                    try {
                        return method.invoke(fake, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(4)).build();
        try (LeaseStore store = LeaseStore.builder().etcdClient(failingOnce).prefix("test/").policy(policy).build()) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", self())).lease();
            armed.set(true);
            Eventually.until("an Error thrown in a keep-alive", Duration.ofSeconds(30), () -> thrownAt.get() >= 0);
            Eventually.until("keep-alives sent after it", Duration.ofSeconds(30), () -> fake.keepAlives.get() >= thrownAt.get() + 3);
            CompletableFuture<LeaseLost> lost = lease.lost();
            assertThat(lost).as("still kept: %s", lost).isNotDone();
            lease.ensureValid();
            lease.release();
        }
    }

    /**
     * An interrupt of the etcd keep-alive thread in the middle of a keep-alive (as a caller's
     * cancellation could reach it) does not end the keeping: keep-alives go on, and the grant stays
     * kept (a thread it once ended was never replaced, and every grant on it was said lost three
     * quarters of a TTL later). Once idle, the thread is also interrupted from outside.
     */
    @Test
    void anInterruptOfTheEtcdKeepAliveThreadEndsNotTheKeeping() throws Exception {
        FakeEtcd fake = new FakeEtcd();
        String threadName = "proclive-etcd-keepalive interrupted/";
        AtomicInteger fromTheThread = new AtomicInteger();
        AtomicBoolean interruptNext = new AtomicBoolean();
        AtomicBoolean interrupted = new AtomicBoolean();
        Etcd counting = (Etcd) Proxy.newProxyInstance(Etcd.class.getClassLoader(), new Class<?>[] {Etcd.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("keepAlive") && Thread.currentThread().getName().equals(threadName)) {
                        fromTheThread.incrementAndGet();
                        if (interruptNext.compareAndSet(true, false)) {
                            Thread.currentThread().interrupt(); // as the gateway leaves it, having been interrupted
                            interrupted.set(true);
                            throw new java.io.InterruptedIOException("interrupted in a keep-alive");
                        }
                    }
                    try {
                        return method.invoke(fake, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        LeasePolicy policy = LeasePolicy.builder().ttl(Duration.ofSeconds(4)).build();
        try (LeaseStore store = LeaseStore.builder().etcdClient(counting).prefix("interrupted/").policy(policy).build()) {
            Lease lease = ((Acquisition.Granted) store.acquire("build", self())).lease();
            Eventually.until("a keep-alive sent by its thread", Duration.ofSeconds(30), () -> fromTheThread.get() >= 1);
            Thread keeper = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.isAlive() && t.getName().equals(threadName)).findFirst().orElseThrow();
            interruptNext.set(true);
            Eventually.until("a keep-alive interrupted", Duration.ofSeconds(30), interrupted::get);
            int before = fromTheThread.get();
            Eventually.until("keep-alives sent after it", Duration.ofSeconds(30), () -> fromTheThread.get() >= before + 3);
            keeper.interrupt();
            int after = fromTheThread.get();
            Eventually.until("keep-alives sent after an interrupt from outside", Duration.ofSeconds(30),
                    () -> fromTheThread.get() >= after + 3);
            CompletableFuture<LeaseLost> lost = lease.lost();
            assertThat(lost).as("still kept: %s", lost).isNotDone();
            lease.ensureValid();
            lease.release();
        }
        Eventually.until("no keep-alive thread once the store is closed", Duration.ofSeconds(30),
                () -> Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.isAlive() && t.getName().equals(threadName)));
    }

    /** A directory's book that throws an {@code Error} once in the store's look (a read), once armed. */
    static final class ErrorOnce extends ForwardingBook {
        final AtomicBoolean armed = new AtomicBoolean();
        final AtomicBoolean lookThrew = new AtomicBoolean();

        ErrorOnce(LeaseBook real) {
            super(real);
        }

        private void maybeThrow(String thread, AtomicBoolean threw, Error error) {
            if (armed.get() && Thread.currentThread().getName().equals(thread) && threw.compareAndSet(false, true)) {
                throw error;
            }
        }

        @Override
        public Optional<LeaseRecord> read(String name) throws IOException {
            maybeThrow("proclive-lease-look", lookThrew, new OutOfMemoryError("thrown in one look"));
            return real.read(name);
        }

        /** None: every look reads the record, so the one armed meets the {@code Error}. */
        @Override
        public Optional<Object> stamp(String name) {
            return Optional.empty();
        }
    }
}
