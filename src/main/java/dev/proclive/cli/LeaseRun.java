package dev.proclive.cli;

import dev.proclive.lease.Acquisition;
import dev.proclive.lease.Lease;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseStore;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;

/**
 * {@code proclive lease run NAME (--dir DIR | --etcd URL) [--wait S] [--ttl S] -- COMMAND [ARG]...}:
 * like {@code flock(1)}, but the lease is the command's, by its identity. The store spawns it under
 * the lease, keeps the lease, and records its end; this process stays its parent, passes SIGTERM,
 * SIGINT, SIGHUP, SIGUSR1, SIGUSR2 and SIGWINCH on to it, sends it SIGTERM when the lease is lost
 * (unless {@code --on-lost warn}), and exits with its status (128+N for a signal). A signal while
 * it waits for the lease ends the wait (128+N) and starts nothing. A refusal is one line on
 * stderr: stdout is the command's. 126/127 are decided by looking the command up as a shell does
 * ({@link CommandLookup}). Killed itself, it leaves the command holding the lease.
 */
final class LeaseRun {

    private final Report report;
    private final PrintStream err;
    /** Whether a lost lease only warns ({@code --on-lost warn}); by default the command is sent SIGTERM. */
    private final boolean warnOnLost;

    LeaseRun(Report report, PrintStream err, boolean warnOnLost) {
        this.report = report;
        this.err = err;
        this.warnOnLost = warnOnLost;
    }

    int run(LeaseStore store, String name, List<String> command, Duration wait) throws IOException {
        ExitCode unrunnable = CommandLookup.check(command.get(0), System.getenv("PATH"));
        if (unrunnable != null) {
            return unrunnable(command.get(0), unrunnable); // as a shell says, before any lease is taken
        }
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().remove(LeaseHelp.PASSWORD_VARIABLE); // the command's, never etcd's password
        SignalRelay signals = new SignalRelay(Thread.currentThread()); // before the child starts: one now ends the wait
        Acquisition spawned;
        try {
            spawned = report.waiting(name, wait, () -> store.read(name), w -> store.spawn(name, builder, w),
                    asked -> asked instanceof Acquisition.Started ? null : asked);
        } catch (IOException e) {
            ExitCode gone = CommandLookup.check(command.get(0), System.getenv("PATH"));
            return signals.endedWait() >= 0 ? signals.endedWait() : gone != null ? unrunnable(command.get(0), gone) : rethrow(e);
        }
        if (!(spawned instanceof Acquisition.Started started)) {
            return signals.endedWait() >= 0 ? signals.endedWait() : report.acquisition(spawned, false, false);
        }
        Lease lease = started.lease();
        started.handOffFailure().ifPresent(f -> Say.line(err, "warning: the lease could not be handed to the command ("
                + (lease.state() == dev.proclive.lease.LeaseRecord.State.RESERVED
                        ? "it stays reserved, and the command can claim it" : "it is " + lease.state().json()) + "): " + f));
        signals.started(started.process());
        lease.lost().thenAccept(lost -> {
            if (lost.why() != LeaseChange.HOLDER_DIED && started.process().isAlive()) {
                lost(lease, lost, signals);
            }
        });
        int status = waitFor(started.process()); // returns once the store has written the command's end, or failed to
        try {
            if (stillGranted(store, lease)) {
                Say.line(err, "warning: the record does not say the command ended (its holder is gone, so the next newcomer"
                        + " takes it)");
            }
        } catch (IOException e) {
            Say.line(err, "warning: the command's end could not be read back: " + e.getMessage());
        }
        return status;
    }

    /** Whether the record still shows {@code lease}'s grant, its end not written. */
    private static boolean stillGranted(LeaseStore store, Lease lease) throws IOException {
        return store.read(lease.name()).map(r -> r.granted() && r.fence() == lease.fence()
                && r.holder().pid() == lease.holder().pid()).orElse(false);
    }

    private int unrunnable(String program, ExitCode code) {
        Say.line(err, program + ": " + (code == ExitCode.NOT_FOUND ? "command not found" : "cannot be run"));
        return code.code();
    }

    private static int rethrow(IOException e) throws IOException {
        throw e; // the lease's files, or a start the system refused: an I/O failure
    }

    private static int waitFor(Process p) {
        while (true) {
            try {
                return p.waitFor();
            } catch (InterruptedException e) {
                // keep waiting: the child decides when this ends
            }
        }
    }

    /** Says the loss once: the command is told with SIGTERM unless {@code --on-lost warn}. */
    private void lost(Lease lease, LeaseLost lost, SignalRelay signals) {
        String why = "lease " + lease.name() + " at fence " + lease.fence() + " is lost ("
                + lost.why().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + "): " + lost.detail();
        if (warnOnLost) {
            Say.line(err, "warning: " + why + "; the command goes on (--on-lost warn)");
        } else {
            Say.line(err, why + "; sending the command SIGTERM (a writer without its lease steps down; --on-lost warn"
                    + " keeps it running)");
            signals.terminate();
        }
    }
}
