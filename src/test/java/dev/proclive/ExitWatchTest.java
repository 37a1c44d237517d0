package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.spi.internal.ExitEvents;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

/**
 * The exit watch's rules over a process table in memory and exit events played by the test, so
 * that they hold on every OS: what completes at once, what is pinned and checked again, what falls
 * back to polling, where callbacks run, what a cancel frees.
 */
class ExitWatchTest {

    final FakeIntrospector table = new FakeIntrospector();
    final Events events = new Events();

    /** Exit events the test fires by hand. */
    static final class Events implements ExitEvents {
        final LinkedBlockingQueue<Long> fired = new LinkedBlockingQueue<>();
        final List<Long> watching = java.util.Collections.synchronizedList(new ArrayList<>());
        final List<Long> unwatched = java.util.Collections.synchronizedList(new ArrayList<>());
        volatile LongFunction<Registration> onWatch = pid -> new Registration.Watching(1000 + pid);
        volatile boolean broken;

        @Override
        public Registration watch(long pid) {
            Registration r = onWatch.apply(pid);
            if (r instanceof Registration.Watching w) {
                watching.add(w.handle());
            }
            return r;
        }

        @Override
        public void unwatch(long handle) {
            watching.remove(handle);
            unwatched.add(handle);
        }

        @Override
        public int await(long timeoutMillis, long[] ready) {
            try {
                Long h = timeoutMillis < 0 ? fired.take() : fired.poll(timeoutMillis, TimeUnit.MILLISECONDS);
                if (broken) {
                    throw new IllegalStateException("epoll_wait: broken on purpose");
                }
                if (h == null || h < 0) {
                    return 0;
                }
                ready[0] = h;
                return 1;
            } catch (InterruptedException e) {
                return 0;
            }
        }

        @Override
        public void wake() {
            fired.add(-1L);
        }

        @Override
        public void close() {
        }
    }

    private LivenessChecker checker(boolean withEvents) {
        return LivenessChecker.of(new FakeIntrospector() {
            {
                table.putAll(ExitWatchTest.this.table.table);
            }

            @Override
            public ProcessLookup lookup(long pid) {
                return ExitWatchTest.this.table.lookup(pid);
            }

            @Override
            public Optional<ExitEvents> openExitEvents() {
                return withEvents ? Optional.of(events) : Optional.empty();
            }
        });
    }

    private Identity alive(long pid, String start) {
        table.process(pid, 1, "sleep", start);
        return new Identity(pid, start, FakeIntrospector.BOOT, FakeIntrospector.HOST, "sleep", FakeIntrospector.PIDNS);
    }

    private void zombie(long pid, String start, int threads) {
        table.put(pid, new ProcessLookup.Found(new ProcessInfo(pid, 1, "sleep", start,
                threads > 0 ? ProcessState.LIVE : ProcessState.ZOMBIE)));
    }

    private static Verdict done(CompletableFuture<Verdict> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aDeadOrUnknownIdentityCompletesAtOnceWithThatVerdict() {
        LivenessChecker c = checker(true);
        CompletableFuture<Verdict> dead = c.onExit(new Identity(77, "1", FakeIntrospector.BOOT, FakeIntrospector.HOST, "", ""));
        assertThat(dead).isCompletedWithValueMatching(v -> v.reason() == Reason.EXITED);
        CompletableFuture<Verdict> unknown = c.onExit(new Identity(77, "1", "", "elsewhere", "", ""));
        assertThat(unknown).isCompletedWithValueMatching(v -> v.reason() == Reason.OTHER_HOST);
        CompletableFuture<Verdict> bare = c.onExit(new Identity(77, "", "", "", "", ""));
        assertThat(bare).isCompletedWithValueMatching(v -> v.liveness() == Liveness.DEAD || v.liveness() == Liveness.UNKNOWN);
        assertThat(events.watching).as("nothing watched").isEmpty();
    }

    @Test
    void anExitEventCompletesWithAFreshVerdictAfterTheHandleIsFreed() throws Exception {
        LivenessChecker c = checker(true);
        Identity id = alive(10, "500");
        CompletableFuture<Verdict> f = c.onExit(id);
        assertThat(f).isNotDone();
        assertThat(events.watching).containsExactly(1010L);
        AtomicReference<List<Long>> heldWhenCompleted = new AtomicReference<>();
        CompletableFuture<Verdict> seen = f.whenComplete((v, e) -> heldWhenCompleted.set(new ArrayList<>(events.watching)));
        zombie(10, "500", 0);
        events.fired.add(1010L);
        assertThat(done(f).reason()).isEqualTo(Reason.ZOMBIE);
        done(seen);
        assertThat(heldWhenCompleted.get()).as("the handle was freed before the future completed").isEmpty();
        assertThat(events.unwatched).containsExactly(1010L);
    }

    @Test
    void aPidGoneBeforeItCouldBePinnedCompletesWithAFreshVerdict() throws Exception {
        LivenessChecker c = checker(true);
        Identity id = alive(11, "500");
        events.onWatch = pid -> {
            table.table.remove(pid); // it exits between the first check and pidfd_open: ESRCH
            return new ExitEvents.Registration.Gone();
        };
        assertThat(c.onExit(id)).isCompletedWithValueMatching(v -> v.reason() == Reason.EXITED);
    }

    @Test
    void aPidReusedBeforeItWasPinnedIsFoundByTheCheckAfterPinning() throws Exception {
        LivenessChecker c = checker(true);
        Identity id = alive(12, "500");
        events.onWatch = pid -> {
            table.process(pid, 1, "other", "900"); // the recorded one exited and the pid went to another
            return new ExitEvents.Registration.Watching(1012);
        };
        assertThat(c.onExit(id)).isCompletedWithValueMatching(v -> v.reason() == Reason.PID_REUSED);
        assertThat(events.unwatched).containsExactly(1012L);
        assertThat(events.watching).isEmpty();
    }

    @Test
    void aZombieLeaderWhoseThreadsRunIsWatchedOnByPolling() throws Exception {
        LivenessChecker c = checker(true);
        Identity id = alive(13, "500");
        CompletableFuture<Verdict> f = c.onExit(id);
        zombie(13, "500", 2); // its event fires when the leader exits; the process lives on
        events.fired.add(1013L);
        Eventually.until("its ready handle is no longer waited on", java.time.Duration.ofSeconds(10),
                () -> events.unwatched.contains(1013L));
        assertThat(f).as("still alive").isNotDone();
        assertThat(events.unwatched).as("its ready handle is no longer waited on").containsExactly(1013L);
        zombie(13, "500", 0);
        assertThat(done(f).reason()).isEqualTo(Reason.ZOMBIE);
    }

    @Test
    void withoutExitEventsEveryWatchPollsAndNoneIsLost() throws Exception {
        LivenessChecker c = checker(false);
        List<CompletableFuture<Verdict>> watches = new ArrayList<>();
        for (long pid = 100; pid < 400; pid++) {
            watches.add(c.onExit(alive(pid, "500")));
        }
        int registered = table.lookups;
        Eventually.until("every watch polled once more", java.time.Duration.ofSeconds(10),
                () -> table.lookups >= registered + watches.size());
        assertThat(watches).as("polled, found alive, none completes").noneMatch(CompletableFuture::isDone);
        for (long pid = 100; pid < 400; pid++) {
            table.table.remove(pid);
        }
        for (CompletableFuture<Verdict> w : watches) {
            assertThat(done(w).reason()).isEqualTo(Reason.EXITED);
        }
    }

    @Test
    void refusedRegistrationsPollBesideWatchedOnes() throws Exception {
        LivenessChecker c = checker(true);
        events.onWatch = pid -> pid % 2 == 0 ? new ExitEvents.Registration.Watching(1000 + pid)
                : new ExitEvents.Registration.Unavailable("EMFILE");
        CompletableFuture<Verdict> evented = c.onExit(alive(20, "500"));
        CompletableFuture<Verdict> polled = c.onExit(alive(21, "500"));
        table.table.remove(21L);
        assertThat(done(polled).reason()).isEqualTo(Reason.EXITED);
        assertThat(evented).isNotDone();
        table.table.remove(20L);
        events.fired.add(1020L);
        assertThat(done(evented).reason()).isEqualTo(Reason.EXITED);
    }

    @Test
    void callbacksRunOffTheWatchingThreadAndABlockedOneStallsNothing() throws Exception {
        LivenessChecker c = checker(true);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch entered = new CountDownLatch(1);
        AtomicReference<String> ranOn = new AtomicReference<>();
        CompletableFuture<Verdict> first = c.onExit(alive(30, "500"));
        CompletableFuture<Void> blocked = first.thenAccept(v -> {
            ranOn.set(Thread.currentThread().getName());
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        first.thenRun(() -> {
            throw new IllegalStateException("a callback that throws");
        });
        CompletableFuture<Verdict> second = c.onExit(alive(31, "500"));
        table.table.remove(30L);
        events.fired.add(1030L);
        // Not first.get(): a thread waiting in get() may run pending stages itself.
        assertThat(entered.await(10, TimeUnit.SECONDS)).as("the callback runs").isTrue();
        table.table.remove(31L);
        events.fired.add(1031L);
        assertThat(done(second).reason()).as("completed while the first callback blocks").isEqualTo(Reason.EXITED);
        assertThat(blocked).isNotDone();
        release.countDown();
        blocked.get(10, TimeUnit.SECONDS);
        assertThat(ranOn.get()).isNotEqualTo("proclive-exit-watch").startsWith("proclive-exit-callback");
    }

    @Test
    void cancelFreesTheHandle() throws Exception {
        LivenessChecker c = checker(true);
        CompletableFuture<Verdict> f = c.onExit(alive(40, "500"));
        assertThat(events.watching).containsExactly(1040L);
        assertThat(f.cancel(false)).isTrue();
        Eventually.until("unwatched", java.time.Duration.ofSeconds(10), events.watching::isEmpty);
        assertThat(events.unwatched).containsExactly(1040L);
    }

    @Test
    void whenWaitingFailsEveryWatchPolls() throws Exception {
        LivenessChecker c = checker(true);
        CompletableFuture<Verdict> f = c.onExit(alive(50, "500"));
        events.broken = true;
        events.wake();
        table.table.remove(50L); // no event will say so: only a poll finds it
        assertThat(done(f).reason()).isEqualTo(Reason.EXITED);
        CompletableFuture<Verdict> later = c.onExit(alive(51, "500"));
        table.table.remove(51L);
        assertThat(done(later).reason()).isEqualTo(Reason.EXITED);
    }

    @Test
    void theWatchingThreadIsADaemon() throws Exception {
        LivenessChecker c = checker(false);
        CompletableFuture<Verdict> f = c.onExit(alive(60, "500"));
        Thread watcher = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("proclive-exit-watch")).findFirst().orElseThrow();
        assertThat(watcher.isDaemon()).isTrue();
        f.cancel(false);
    }
}
