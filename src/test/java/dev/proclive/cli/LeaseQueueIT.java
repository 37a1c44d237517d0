package dev.proclive.cli;

import dev.proclive.Eventually;
import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * Waiters are served in order: processes that wait for a held lease are granted it in the order
 * they came, each when the one before it is done, and one that does not wait never jumps the queue.
 */
@EnabledOnOs(OS.LINUX)
class LeaseQueueIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    @TempDir
    Path tmp;

    private String dir() {
        return tmp.resolve("leases").toString();
    }

    private long queued() throws Exception {
        Path queue = Path.of(dir(), "build.queue");
        return Files.exists(queue) ? Files.readAllLines(queue).stream().filter(l -> !l.isBlank()).count() : 0;
    }

    /** Where the lease is, as CLI arguments, and how many waiters its queue holds now. */
    private interface Store {
        List<String> args();

        long queued() throws Exception;
    }

    private String[] with(Store store, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(3, store.args()); // after lease ACTION NAME
        return all.toArray(String[]::new);
    }

    private Store directory() {
        return new Store() {
            @Override
            public List<String> args() {
                return List.of("--dir", dir());
            }

            @Override
            public long queued() throws Exception {
                return LeaseQueueIT.this.queued();
            }
        };
    }

    /** {@code test} over a one-member etcd started for it, prefix {@code queue/}. */
    private void onEtcd(TestOn test) throws Exception {
        try (dev.proclive.lease.EtcdCluster etcd = dev.proclive.lease.EtcdCluster.start(Files.createDirectories(tmp.resolve("etcd")), 1);
             dev.proclive.etcd.EtcdGateway raw = dev.proclive.etcd.EtcdGateway.open(etcd.endpoints(),
                     java.util.Optional.empty(), java.time.Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper())) {
            test.run(new Store() {
                @Override
                public List<String> args() {
                    return List.of("--etcd", etcd.endpoints().get(0).toString(), "--prefix", "queue/");
                }

                @Override
                public long queued() throws Exception {
                    return raw.list("queue/build.queue/").size();
                }
            });
        }
    }

    private interface TestOn {
        void run(Store store) throws Exception;
    }

    @Test
    void sixWaitersAreGrantedInTheOrderTheyCameAndANewcomerWaitsItsTurn() throws Exception {
        sixWaiters(directory());
    }

    @Test
    void onEtcdSixWaitersAreGrantedInTheOrderTheyCame() throws Exception {
        onEtcd(this::sixWaiters);
    }

    @Test
    void twoProcessesWaitingForTheSameHolderEachKeepTheirPlace() throws Exception {
        twoWaitersForOneHolder(directory());
    }

    @Test
    void onEtcdTwoProcessesWaitingForTheSameHolderEachKeepTheirPlace() throws Exception {
        onEtcd(this::twoWaitersForOneHolder);
    }

    /**
     * Two processes wait for the same holder-to-be, then a third for another; the first of the two
     * gives up (stopped by SIGTERM). The second still comes before the third.
     */
    private void twoWaitersForOneHolder(Store store) throws Exception {
        Process first = children.sleeper();
        assertThat(Cli.run(with(store, "lease", "acquire", "build", "--holder", Long.toString(first.pid()))).exit())
                .isZero();
        String same = Long.toString(children.sleeper().pid());
        String other = Long.toString(children.sleeper().pid());
        List<Process> waiters = new ArrayList<>();
        for (String holder : List.of(same, same, other)) {
            int i = waiters.size();
            Process w = new ProcessBuilder(Cli.command(Cli.jar(), with(store, "lease", "acquire", "build", "--holder",
                    holder, "--wait", "120", "--print", "fence")))
                    .redirectError(tmp.resolve("waiter" + i + ".err").toFile()).start();
            waiters.add(children.adopt(w));
            Eventually.until("waiter " + i + " queued with a ticket of its own", java.time.Duration.ofSeconds(60),
                    () -> store.queued() >= i + 1);
        }
        waiters.get(0).destroy(); // gives up: its ticket goes, not the other's for the same holder
        assertThat(waiters.get(0).waitFor(60, TimeUnit.SECONDS)).isTrue();
        first.destroyForcibly();
        assertThat(waiters.get(1).waitFor(90, TimeUnit.SECONDS)).as("the second granted (said: %s)", said(1)).isTrue();
        assertThat(waiters.get(1).exitValue()).as("the second (it said: %s)", said(1)).isZero();
        assertThat(waiters.get(2).isAlive()).as("the third waits its turn (it said: %s)", said(2)).isTrue();
    }

    /** What waiter {@code i} wrote on stderr. */
    private String said(int i) throws java.io.IOException {
        Path err = tmp.resolve("waiter" + i + ".err");
        return Files.exists(err) ? Files.readString(err).strip() : "";
    }

    private void sixWaiters(Store store) throws Exception {
        Process first = children.sleeper();
        assertThat(Cli.run(with(store, "lease", "acquire", "build", "--holder", Long.toString(first.pid()))).exit())
                .isZero();
        List<Process> holders = new ArrayList<>();
        List<Process> waiters = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Process holder = children.sleeper();
            holders.add(holder);
            Process w = new ProcessBuilder(Cli.command(Cli.jar(), with(store, "lease", "acquire", "build", "--holder",
                    Long.toString(holder.pid()), "--wait", "120", "--print", "fence")))
                    .redirectError(tmp.resolve("waiter" + i + ".err").toFile()).start();
            children.adopt(w);
            waiters.add(w);
            int n = i + 1; // its ticket is written: it came before the next
            Eventually.until("waiter " + i + " queued", java.time.Duration.ofSeconds(60), () -> store.queued() >= n);
            assertThat(store.queued()).as("waiter %d queued", i).isEqualTo(n);
        }
        first.destroyForcibly(); // the holder ends: the longest-waiting is granted
        for (int i = 0; i < 6; i++) {
            assertThat(waiters.get(i).waitFor(90, TimeUnit.SECONDS)).as("waiter %d granted (said: %s; later ones: %s)", i, said(i), said(5)).isTrue();
            assertThat(waiters.get(i).exitValue()).as("waiter %d (it said: %s)", i, said(i)).isZero();
            for (int later = i + 1; later < 6; later++) {
                assertThat(waiters.get(later).isAlive()).as("waiter %d still waits its turn after %d (it said: %s)", later, i,
                        said(later)).isTrue();
            }
            if (i < 5) {
                Cli.Result jumper = Cli.run(with(store, "lease", "acquire", "build", "--holder",
                        Long.toString(children.sleeper().pid())));
                assertThat(jumper.exit()).as("a newcomer that does not wait: %s", jumper.err()).isNotZero();
            }
            holders.get(i).destroyForcibly(); // done: the next in line
        }
        assertThat(store.queued()).as("every ticket taken out").isZero();
    }

    @Test
    void aWaiterThatDiesNeverBlocksTheQueue() throws Exception {
        Process first = children.sleeper();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir(), "--holder", Long.toString(first.pid())).exit())
                .isZero();
        Process waitedFor = children.sleeper();
        Process dying = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir(), "--holder",
                Long.toString(waitedFor.pid()), "--wait", "120")).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        children.adopt(dying);
        Eventually.until("the waiter queued", java.time.Duration.ofSeconds(60), () -> queued() == 1);
        // the waiter's JVM is killed, and with it the process it waited for
        dying.destroyForcibly();
        waitedFor.destroyForcibly();
        first.destroyForcibly();
        Cli.Result next = Cli.run("lease", "acquire", "build", "--dir", dir(), "--holder", Long.toString(children.sleeper().pid()),
                "--wait", "30");
        assertThat(next.exit()).as("its dead ticket is dropped: %s", next.err()).isZero();
    }
}
