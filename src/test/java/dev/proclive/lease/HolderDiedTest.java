package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Eventually;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A status screen hears that a holder died though nobody writes it: a holder killed with SIGKILL
 * (not a child of the store's JVM) is told to a watch's listener as {@link LeaseChange#HOLDER_DIED}
 * within a second, on a directory and on etcd alike.
 */
@EnabledOnOs(OS.LINUX)
class HolderDiedTest {

    @TempDir
    Path tmp;

    private long holderPid = -1;
    private Process parent;

    @AfterEach
    void killHolder() {
        if (holderPid > 0) {
            ProcessHandle.of(holderPid).ifPresent(ProcessHandle::destroyForcibly);
        }
        if (parent != null) {
            parent.destroyForcibly();
        }
    }

    /**
     * A {@code sleep} whose parent is another process that lives on (it never reaps it): no child of
     * this JVM, even where an earlier test made this JVM a subreaper (an orphan would be its child).
     */
    private Identity notAChild() throws Exception {
        parent = new ProcessBuilder("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!; exec sleep 300 >/dev/null").start();
        String pid = new java.io.BufferedReader(new java.io.InputStreamReader(parent.getInputStream(),
                StandardCharsets.US_ASCII)).readLine().strip();
        holderPid = Long.parseLong(pid);
        assertThat(ProcessHandle.current().children().anyMatch(c -> c.pid() == holderPid)).isFalse();
        return ProcLive.identify(holderPid).orElseThrow();
    }

    /**
     * @param endedByItsStore whether the store that wrote the grant ends it as {@code exited} the
     *                        moment its holder dies (etcd): the watch may then read that end before
     *                        its own exit watch fires, and tells it as {@code EXITED}, the record
     *                        saying the holder is dead ({@link LeaseChange#HOLDER_DIED} is for a
     *                        holder that died while its record still names it)
     */
    private void heardWithinASecond(LeaseStore store, boolean endedByItsStore) throws Exception {
        Identity holder = notAChild();
        assertThat(store.acquire("build", holder)).isInstanceOf(Acquisition.Granted.class);
        BlockingQueue<LeaseEvent> heard = new LinkedBlockingQueue<>();
        try (AutoCloseable w = store.watch("build", heard::add)) {
            long killed = System.nanoTime();
            ProcessHandle.of(holderPid).orElseThrow().destroyForcibly();
            LeaseEvent e = heard.poll(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
            assertThat(e).as("an event after the kill").isNotNull();
            if (endedByItsStore && e.kind() == LeaseChange.EXITED) {
                assertThat(e.record().ended()).as("%s", e).hasValueSatisfying(end ->
                        assertThat(end.verdict().liveness()).isEqualTo(dev.proclive.Liveness.DEAD));
            } else {
                assertThat(e.kind()).as("%s", e).isEqualTo(LeaseChange.HOLDER_DIED);
            }
            assertThat(e.record().holder().pid()).isEqualTo(holder.pid());
            assertThat(tookMs).as("heard %d ms after the kill", tookMs)
                    .isLessThan(Eventually.scaled(Duration.ofSeconds(1)).toMillis());
            // on etcd this store, which wrote the grant, then ends it as exited: told after, as it is
            LeaseEvent next = heard.poll(300, TimeUnit.MILLISECONDS);
            assertThat(next == null ? null : next.kind()).as("told once: %s", next).isNotEqualTo(LeaseChange.HOLDER_DIED);
        }
    }

    @Test
    void onADirectory() throws Exception {
        try (LeaseStore store = LeaseStore.open(tmp.resolve("leases"))) {
            heardWithinASecond(store, false);
        }
    }

    @Test
    void onEtcd() throws Exception {
        try (LeaseStore store = LeaseStore.builder().etcdClient(new FakeEtcd()).prefix("test/").build()) {
            heardWithinASecond(store, true);
        }
    }

    /**
     * A watch opened while the store's event run is under way (here from a listener, which then
     * takes longer than a look's period) follows its holder all the same: its death is told.
     */
    @Test
    void aWatchOpenedDuringALongListenerCallStillHearsItsHolderDie() throws Exception {
        try (LeaseStore store = LeaseStore.open(tmp.resolve("leases"))) {
            Identity holder = notAChild();
            assertThat(store.acquire("build", holder)).isInstanceOf(Acquisition.Granted.class);
            BlockingQueue<LeaseEvent> heard = new LinkedBlockingQueue<>();
            java.util.concurrent.atomic.AtomicReference<AutoCloseable> opened = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
            try (AutoCloseable first = store.watch("other", e -> {
                if (opened.get() == null) {
                    try {
                        opened.set(store.watch("build", heard::add));
                        Thread.sleep(3 * 100 + 100); // longer than a directory's look period
                    } catch (Exception ex) {
                        throw new IllegalStateException(ex);
                    } finally {
                        inside.countDown();
                    }
                }
            })) {
                assertThat(store.acquire("other", ProcLive.current().orElseThrow())).isInstanceOf(Acquisition.Granted.class);
                assertThat(inside.await(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                Thread.sleep(500); // a few looks at the new watch, its record unchanged
                ProcessHandle.of(holderPid).orElseThrow().destroyForcibly();
                LeaseEvent e = heard.poll(Eventually.scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
                assertThat(e).as("an event after the kill").isNotNull();
                assertThat(e.kind()).as("%s", e).isEqualTo(LeaseChange.HOLDER_DIED);
            } finally {
                if (opened.get() != null) {
                    opened.get().close();
                }
            }
        }
    }
}
