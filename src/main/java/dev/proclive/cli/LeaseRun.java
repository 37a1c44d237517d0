package dev.proclive.cli;

import dev.proclive.lease.Lease;
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
 * a reservation and handed the lease; this process stays its parent (its store renews the lease
 * every third of its TTL), passes SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 and SIGWINCH on to it with kill(2),
 * ends the lease as {@code exited} with its
 * status when it exits, and exits with that status (128+N for a signal) even when ending the lease
 * fails. A signal while it waits for the lease ends the wait (128+N) and starts nothing. A
 * refusal is one line on stderr: stdout is the command's. 126/127 are decided by looking the
 * command up as a shell does ({@link CommandLookup}). Killed itself, it leaves the command holding
 * the lease.
 */
final class LeaseRun {

    private final Report report;
    private final PrintStream err;
    /** Whether a lost lease only warns ({@code --on-lost warn}); by default the command is sent SIGTERM. */
    private final boolean warnOnLost;
    /** Whether the loss was said already: once. */
    private volatile boolean saidLost;
    /** The command once it runs, and the signals that came before. */
    private Process child;
    private final List<String> pending = new java.util.ArrayList<>();

    LeaseRun(Report report, PrintStream err, boolean warnOnLost) {
        this.report = report;
        this.err = err;
        this.warnOnLost = warnOnLost;
    }

    int run(LeaseStore store, String name, List<String> command, Duration wait) throws IOException {
        ExitCode unrunnable = CommandLookup.check(command.get(0), System.getenv("PATH"));
        if (unrunnable != null) {
            Say.line(err, command.get(0) + ": " + (unrunnable == ExitCode.NOT_FOUND ? "command not found" : "cannot be run"));
            return unrunnable.code(); // as a shell says, before any lease is taken
        }
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().remove(LeaseHelp.PASSWORD_VARIABLE); // the command's, never etcd's password
        waiter = Thread.currentThread();
        forwardSignals(); // before the child starts: a signal during the wait ends it, one after goes to the child
        Spawn spawned;
        try {
            spawned = store.spawn(name, builder, wait);
        } catch (IOException e) {
            String signal = signalBeforeStart();
            if (signal != null) {
                return 128 + number(signal); // the wait was ended by a signal: nothing started
            }
            ExitCode gone = CommandLookup.check(command.get(0), System.getenv("PATH"));
            if (gone != null) { // it went, or changed, between the lookup and the start
                Say.line(err, command.get(0) + ": " + (gone == ExitCode.NOT_FOUND ? "command not found" : "cannot be run"));
                return gone.code();
            }
            throw e; // the lease's files, or a start the system refused: an I/O failure
        }
        if (spawned instanceof Spawn.Refused refused) {
            String signal = signalBeforeStart();
            if (signal != null) {
                return 128 + number(signal);
            }
            return report.acquisition(refused.refusal(), false, false);
        }
        Spawn.Started started = (Spawn.Started) spawned;
        Process child = started.process();
        Lease lease = started.lease();
        started.handOffFailure().ifPresent(f -> Say.line(err, "warning: the lease could not be handed to the command ("
                + whatItIs(store, name, lease) + "): " + f));
        childStarted(child);
        // The store renews the lease (every third of its TTL) while this JVM lives. What this JVM knows
        // of the grant is looked at often and without asking anyone: a lease lost (a renewal that found
        // it taken or broken; etcd: its keep-alive or its renewal unconfirmed for 3/4 of its TTL) is said
        // then, not when a blocked call fails.
        ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "proclive-lease-lost");
            t.setDaemon(true);
            return t;
        });
        long look = Math.max(20, Math.min(250, lease.record().ttl().toMillis() / 20));
        watcher.scheduleAtFixedRate(() -> watchLost(lease, child), look, look, TimeUnit.MILLISECONDS);
        int status;
        while (true) {
            try {
                status = child.waitFor();
                break;
            } catch (InterruptedException e) {
                // keep waiting: the child decides when this ends
            }
        }
        watcher.shutdownNow();
        try {
            lease.exited(status);
        } catch (IOException | RuntimeException e) {
            Say.line(err, "warning: the lease could not be ended as exited (its holder is gone, so the next "
                    + "newcomer takes it): " + e.getMessage());
        }
        return status;
    }

    /** Says a lost lease once, the moment this JVM knows it: the command is told with SIGTERM unless {@code --on-lost warn}. */
    private void watchLost(Lease lease, Process command) {
        if (!saidLost && lease.knownLost()) {
            lost(lease, "lease " + lease.name() + " at fence " + lease.fence() + " is lost: it was taken over or"
                    + " broken, or its keep-alive or renewal was not confirmed for three quarters of its TTL, and someone"
                    + " else may be granted it");
        }
    }

    private synchronized void lost(Lease lease, String why) {
        if (saidLost) {
            return;
        }
        saidLost = true;
        if (warnOnLost) {
            Say.line(err, "warning: " + why + "; the command goes on (--on-lost warn)");
        } else {
            Say.line(err, why + "; sending the command SIGTERM (a writer without its lease steps down; --on-lost warn"
                    + " keeps it running)");
            if (child != null) {
                pass(child, "TERM");
            }
        }
    }

    /** What the record is now, for a warning: still the reservation (the command can claim it), or not. */
    private static String whatItIs(LeaseStore store, String name, Lease lease) {
        try {
            java.util.Optional<dev.proclive.lease.LeaseRecord> now = store.read(name);
            if (now.isEmpty()) {
                return "there is no record of it now";
            }
            dev.proclive.lease.LeaseRecord r = now.get();
            if (r.fence() == lease.fence() && r.state() == dev.proclive.lease.LeaseRecord.State.RESERVED) {
                return "it stays reserved, and the command can claim it";
            }
            return "the record is " + r.state().json() + " at fence " + r.fence() + " by pid " + r.holder().pid();
        } catch (IOException | RuntimeException e) {
            return "what the record is now cannot be read: " + e.getMessage();
        }
    }

    /** The main thread while it waits for the lease: a signal then interrupts it. */
    private Thread waiter;

    /** The first signal that came before the child started and ends a wait, or null. */
    private synchronized String signalBeforeStart() {
        return pending.stream().filter(ENDING::contains).findFirst().orElse(null);
    }

    private static int number(String signal) {
        return new sun.misc.Signal(signal).getNumber();
    }

    /** The signals that end a wait for the lease; the others only go to the command once it runs. */
    private static final List<String> ENDING = List.of("TERM", "INT", "HUP");

    /**
     * SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2 and SIGWINCH to this process go to the child
     * instead, once it runs; before that, the first three end the wait. (SIGQUIT stays the JVM's:
     * the launcher keeps its thread dump out of the command's output.)
     */
    private void forwardSignals() {
        for (String signal : List.of("TERM", "INT", "HUP", "USR1", "USR2", "WINCH")) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> received(signal));
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                // a signal this platform does not have, or one the JVM keeps: left as it is
            }
        }
    }

    private synchronized void received(String signal) {
        if (child == null) {
            // Kept for the command: it may have started already, its hand-off not yet returned.
            pending.add(signal);
            if (ENDING.contains(signal) && waiter != null) {
                waiter.interrupt(); // ends a wait for the lease: the command is not started later
            }
        } else {
            pass(child, signal);
        }
    }

    private synchronized void childStarted(Process started) {
        child = started;
        waiter = null;
        Thread.interrupted(); // a signal that raced the start is passed on below, not left pending here
        pending.forEach(signal -> pass(started, signal));
        pending.clear();
    }

    /** Passes {@code signal} on with kill(2); only if that cannot be done, TERM as the JDK sends it. */
    private static void pass(Process child, String signal) {
        int number;
        try {
            number = new sun.misc.Signal(signal).getNumber();
        } catch (IllegalArgumentException e) {
            return;
        }
        if (!dev.proclive.posix.Signals.send(child.pid(), number) && signal.equals("TERM")) {
            child.destroy(); // SIGTERM on POSIX
        }
    }
}
