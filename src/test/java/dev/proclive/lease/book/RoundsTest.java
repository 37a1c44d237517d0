package dev.proclive.lease.book;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Eventually;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Work run by a time and never later, on one thread that lives while there is work: what the session file and keep-alive run on. */
class RoundsTest {

    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    /** Says it is running, then waits for {@code go} (30 s at most): a run held open while the test acts. */
    private static void holdOpen(CountDownLatch running, CountDownLatch go) {
        running.countDown();
        try {
            go.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static boolean threadNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.isAlive() && t.getName().equals(name));
    }

    @Test
    void aRunAskedSoonerMovesTheOneSet() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Rounds rounds = new Rounds("rounds-test-sooner", runs::incrementAndGet, OptionalLong::empty);
        try {
            rounds.in(HOUR);
            Thread.sleep(100);
            assertThat(runs).as("nothing due yet").hasValue(0);
            rounds.in(0);
            Eventually.until("the run moved up", Duration.ofSeconds(10), () -> runs.get() == 1);
        } finally {
            rounds.close(Duration.ofSeconds(5));
        }
    }

    /**
     * A run asked for while one runs is set by the running one as it ends: what {@code after} finds
     * then is what the caller changed before asking.
     */
    @Test
    void aRunAskedForWhileOneRunsComesAfterIt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        AtomicBoolean more = new AtomicBoolean();
        Rounds rounds = new Rounds("rounds-test-during", () -> {
            if (runs.incrementAndGet() == 1) {
                holdOpen(running, go);
            }
        }, () -> more.getAndSet(false) ? OptionalLong.of(System.nanoTime()) : OptionalLong.empty());
        try {
            rounds.in(0);
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
            more.set(true);
            rounds.in(0); // while the first runs: it sets this one as it ends
            go.countDown();
            Eventually.until("a second run", Duration.ofSeconds(10), () -> runs.get() == 2);
        } finally {
            go.countDown();
            rounds.close(Duration.ofSeconds(5));
        }
    }

    /**
     * A run asked for by a time already past while one runs (a grant kept whose record is older
     * than a third of its TTL) is not a second run beside it: the running one sets the next as it
     * ends, here none. A task the scheduler runs says it is cancelled only once it ended, so the
     * running one is never taken for one set and moved.
     */
    @Test
    void aRunAskedForByAPastTimeWhileOneRunsIsNotASecondRun() throws Exception {
        String name = "rounds-test-past";
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        Rounds rounds = new Rounds(name, () -> {
            runs.incrementAndGet();
            holdOpen(running, go);
        }, OptionalLong::empty);
        try {
            rounds.in(0);
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
            rounds.by(System.nanoTime() - HOUR);
            go.countDown();
            Eventually.until("its thread ended, nothing left", Duration.ofSeconds(10), () -> !threadNamed(name));
            assertThat(runs).as("one run: the one asked for during it was left to it").hasValue(1);
        } finally {
            go.countDown();
            rounds.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void theThreadEndsWhenNothingIsLeftAndTheNextCallStartsAnother() throws Exception {
        String name = "rounds-test-ends";
        AtomicInteger runs = new AtomicInteger();
        AtomicBoolean more = new AtomicBoolean(true);
        Rounds rounds = new Rounds(name, runs::incrementAndGet,
                () -> more.get() ? OptionalLong.of(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20)) : OptionalLong.empty());
        try {
            rounds.in(0);
            Eventually.until("runs again and again", Duration.ofSeconds(10), () -> runs.get() >= 3);
            assertThat(threadNamed(name)).isTrue();
            more.set(false);
            Eventually.until("its thread ended", Duration.ofSeconds(10), () -> !threadNamed(name));
            int before = runs.get();
            rounds.in(0);
            Eventually.until("run on a new thread", Duration.ofSeconds(10), () -> runs.get() == before + 1);
        } finally {
            rounds.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void anErrorInARunIsItsAloneAndTheNextIsSet() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Rounds rounds = new Rounds("rounds-test-error", () -> {
            if (runs.incrementAndGet() == 1) {
                throw new OutOfMemoryError("thrown in one run, as an application that lives on meets it");
            }
        }, () -> OptionalLong.of(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10)));
        try {
            rounds.in(0);
            Eventually.until("runs after the Error", Duration.ofSeconds(10), () -> runs.get() >= 3);
        } finally {
            rounds.close(Duration.ofSeconds(5));
        }
    }

    /** An {@code Error} asking when the next run is due (out of memory as it ends) does not end the rounds. */
    @Test
    void anErrorAskingForTheNextRunEndsNotTheRounds() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        AtomicBoolean thrown = new AtomicBoolean();
        Rounds rounds = new Rounds("rounds-test-after-error", runs::incrementAndGet, () -> {
            if (thrown.compareAndSet(false, true)) {
                throw new OutOfMemoryError("thrown asking for the next run");
            }
            return OptionalLong.of(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10));
        });
        try {
            rounds.in(0);
            Eventually.until("runs after the Error", Duration.ofSeconds(30), () -> runs.get() >= 3);
            assertThat(thrown).isTrue();
        } finally {
            rounds.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void aRunTheSchedulerCouldNotSetIsSetByTheNextCall() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger calls = new AtomicInteger();
        // the second run set fails as a scheduler out of memory fails (an Error the application lives through)
        ScheduledThreadPoolExecutor failingOnce = new ScheduledThreadPoolExecutor(1) {
            @Override
            public ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
                if (calls.incrementAndGet() == 2) {
                    throw new OutOfMemoryError("no room for the task");
                }
                return super.schedule(task, delay, unit);
            }
        };
        Rounds rounds = new Rounds(() -> failingOnce, runs::incrementAndGet, OptionalLong::empty);
        try {
            rounds.in(HOUR); // set, not run yet
            assertThatThrownBy(() -> rounds.in(0)).as("the run set is cancelled, the new one cannot be set")
                    .isInstanceOf(OutOfMemoryError.class);
            rounds.in(0); // and the scheduler works again
            Eventually.until("a run", Duration.ofSeconds(10), () -> runs.get() == 1);
        } finally {
            rounds.close(Duration.ofSeconds(5));
            failingOnce.shutdownNow();
        }
    }

    @Test
    void closedNothingRunsAndARunUnderWayIsWaitedFor() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean ended = new AtomicBoolean();
        Rounds rounds = new Rounds("rounds-test-close", () -> {
            runs.incrementAndGet();
            running.countDown();
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            while (System.nanoTime() - until < 0) {
                Thread.onSpinWait(); // not cut short by an interrupt
            }
            ended.set(true);
        }, () -> OptionalLong.of(System.nanoTime()));
        rounds.in(0);
        assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
        rounds.close(Duration.ofSeconds(30));
        assertThat(ended).as("the run under way ended before close returned").isTrue();
        rounds.in(0);
        rounds.close(Duration.ofSeconds(5)); // twice: nothing more
        Thread.sleep(100);
        assertThat(runs).as("none after close, though after asked for one at once").hasValue(1);
        Eventually.until("its thread ended", Duration.ofSeconds(10), () -> !threadNamed("rounds-test-close"));
    }

    /**
     * A run that closes its own rounds (a listener closing its store on the event thread) is neither
     * made to wait for itself nor interrupted: what it closes next can still wait for its writes.
     */
    @Test
    void aRunThatClosesItsOwnRoundsIsNotInterruptedNorKeptWaiting() throws Exception {
        java.util.concurrent.atomic.AtomicReference<Rounds> self = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.CompletableFuture<long[]> seen = new java.util.concurrent.CompletableFuture<>();
        Rounds rounds = new Rounds("rounds-test-self-close", () -> {
            long began = System.nanoTime();
            self.get().close(Duration.ofSeconds(20));
            seen.complete(new long[] {System.nanoTime() - began, Thread.currentThread().isInterrupted() ? 1 : 0});
        }, () -> OptionalLong.of(System.nanoTime()));
        self.set(rounds);
        rounds.in(0);
        long[] after = seen.get(60, TimeUnit.SECONDS);
        assertThat(after[1]).as("the run interrupted by its own close").isZero();
        assertThat(TimeUnit.NANOSECONDS.toSeconds(after[0])).as("seconds the close waited for the run calling it").isLessThan(10);
        Eventually.until("its thread ended", Duration.ofSeconds(10), () -> !threadNamed("rounds-test-self-close"));
    }
}
