package dev.proclive.cli;

import dev.proclive.lease.Acquisition;
import dev.proclive.lease.Lease;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeaseStore;
import dev.proclive.lease.Spawn;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@code proclive lease run NAME --dir DIR [--wait S] [--ttl S] -- COMMAND [ARG]...}: like
 * {@code flock(1)}, but the lease is the command's, by its identity. The command is started under
 * a reservation and handed the lease; this process stays its parent, renews the lease every third
 * of its TTL, passes SIGTERM, SIGINT and SIGHUP on to it, ends the lease as {@code exited} with its
 * status when it exits, and exits with that status (128+N for a signal). Killed itself, it leaves
 * the command holding the lease.
 */
final class LeaseRun {

    private final LeaseCommand report;
    private final PrintStream err;
    /** The command once it runs, and the signals that came before. */
    private Process child;
    private final List<String> pending = new java.util.ArrayList<>();

    LeaseRun(LeaseCommand report, PrintStream err) {
        this.report = report;
        this.err = err;
    }

    int run(LeaseStore store, String name, List<String> command, Duration wait) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        forwardSignals(); // before the child starts: a signal that comes at once is passed on, not fatal here
        Spawn spawned;
        try {
            spawned = store.spawn(name, builder, wait);
        } catch (IOException e) {
            String m = String.valueOf(e.getMessage());
            if (!m.startsWith("Cannot run program")) {
                throw e; // the lease's files
            }
            Main.say(err, m);
            return (m.contains("error=2,") ? ExitCode.NOT_FOUND : ExitCode.CANNOT_RUN).code(); // as a shell says
        }
        if (spawned instanceof Spawn.Held held) {
            return report.report(new Acquisition.Held(held.record(), held.verdict()), false);
        }
        if (spawned instanceof Spawn.Undecided u) {
            return report.report(new Acquisition.Undecided(u.record(), u.verdict(), u.eligibleAt()), false);
        }
        Spawn.Started started = (Spawn.Started) spawned;
        Process child = started.process();
        Lease lease = started.lease();
        childStarted(child);
        ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "proclive-lease-renew");
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(1, lease.record().ttl().toMillis() / 3);
        renewer.scheduleAtFixedRate(() -> renew(lease, renewer), period, period, TimeUnit.MILLISECONDS);
        int status;
        while (true) {
            try {
                status = child.waitFor();
                break;
            } catch (InterruptedException e) {
                // keep waiting: the child decides when this ends
            }
        }
        renewer.shutdownNow();
        lease.exited(status);
        return status;
    }

    private void renew(Lease lease, ScheduledExecutorService renewer) {
        try {
            lease.renew();
        } catch (LeaseLostException e) {
            Main.say(err, e.getMessage());
            renewer.shutdown();
        } catch (IOException | RuntimeException e) {
            Main.say(err, "cannot renew lease " + lease.name() + ": " + e); // tried again next period
        }
    }

    /** SIGTERM, SIGINT and SIGHUP to this process go to the child instead (once it runs; until then they wait). */
    private void forwardSignals() {
        for (String signal : List.of("TERM", "INT", "HUP")) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> received(signal));
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                // a signal this platform does not have, or one the JVM keeps: left as it is
            }
        }
    }

    private synchronized void received(String signal) {
        if (child == null) {
            pending.add(signal);
        } else {
            pass(child, signal);
        }
    }

    private synchronized void childStarted(Process started) {
        child = started;
        pending.forEach(signal -> pass(started, signal));
        pending.clear();
    }

    private static void pass(Process child, String signal) {
        if (signal.equals("TERM")) {
            child.destroy(); // SIGTERM on POSIX
            return;
        }
        try {
            new ProcessBuilder("kill", "-s", signal, Long.toString(child.pid())).inheritIO().start();
        } catch (IOException e) {
            child.destroy();
        }
    }
}
