package dev.proclive.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * The signals {@code lease run} passes on to its command with kill(2): SIGTERM, SIGINT, SIGHUP,
 * SIGUSR1, SIGUSR2 and SIGWINCH (SIGQUIT stays the JVM's: the launcher keeps its thread dump out of
 * the command's output). Before the command runs they are kept for it, and the first three end the
 * wait for the lease by interrupting the waiting thread.
 */
final class SignalRelay {

    private static final List<String> PASSED = List.of("TERM", "INT", "HUP", "USR1", "USR2", "WINCH");
    private static final List<String> ENDING = PASSED.subList(0, 3);

    private Process child;
    private final List<String> pending = new ArrayList<>();
    private Thread waiter;

    /** Takes the signals from now on; {@code waiting} is the thread a signal interrupts until the command runs. */
    SignalRelay(Thread waiting) {
        this.waiter = waiting;
        for (String signal : PASSED) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> received(signal));
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                // a signal this platform does not have, or one the JVM keeps: left as it is
            }
        }
    }

    /** 128+N for the first signal that came before the command started and ends a wait; -1 when none did. */
    synchronized int endedWait() {
        return pending.stream().filter(ENDING::contains).findFirst().map(s -> 128 + new sun.misc.Signal(s).getNumber())
                .orElse(-1);
    }

    private synchronized void received(String signal) {
        if (child != null) {
            pass(child, signal);
            return;
        }
        pending.add(signal); // kept for the command: it may have started already, its hand-off not yet returned
        if (ENDING.contains(signal) && waiter != null) {
            waiter.interrupt(); // ends a wait for the lease: the command is not started later
        }
    }

    /** The command runs: what came before is passed on now, and every signal from now on. */
    synchronized void started(Process command) {
        child = command;
        waiter = null;
        Thread.interrupted(); // a signal that raced the start is passed on below, not left pending here
        pending.forEach(signal -> pass(command, signal));
        pending.clear();
    }

    /**
     * Sends the command SIGTERM, through {@link Process#destroy()}: a command the store started in a
     * cgroup of its own is stopped with everything inside (what it forked steps down with it).
     */
    synchronized void terminate() {
        child.destroy();
    }

    /** Passes {@code signal} on with kill(2); only if that cannot be done, TERM as the JDK sends it. */
    private static void pass(Process child, String signal) {
        if (!dev.proclive.posix.Signals.send(child.pid(), new sun.misc.Signal(signal).getNumber()) && signal.equals("TERM")) {
            child.destroy(); // SIGTERM on POSIX
        }
    }
}
