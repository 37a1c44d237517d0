package dev.proclive;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * How a process ended, where the kernel told: it exited with a status ({@link #code()}), or a
 * signal ended it ({@link #signal()}, with {@link #coreDumped()}). One of the two is present.
 * Linux tells it for any process whose pidfd the exit watch held before its end, once its parent
 * has reaped it (Linux 6.15 and later, {@code PIDFD_GET_INFO}); signal numbers are the platform's.
 *
 * @param code       the exit status (0 to 255), when it exited
 * @param signal     the signal that ended it, when one did
 * @param coreDumped whether that signal left a core dump
 */
public record ExitStatus(OptionalInt code, OptionalInt signal, boolean coreDumped) {

    /**
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException unless exactly one of {@code code} and {@code signal} is
     *                                  present, the code 0 to 255 and the signal positive, and a core
     *                                  dump only with a signal
     */
    public ExitStatus {
        if (code == null || signal == null) {
            throw new NullPointerException(code == null ? "code" : "signal");
        }
        if (code.isPresent() == signal.isPresent()) {
            throw new IllegalArgumentException("an exit status has a code or a signal, exactly one");
        }
        if (code.isPresent() && (code.getAsInt() < 0 || code.getAsInt() > 255)) {
            throw new IllegalArgumentException("an exit code is 0 to 255, got " + code.getAsInt());
        }
        if (signal.isPresent() && signal.getAsInt() <= 0) {
            throw new IllegalArgumentException("a signal number is positive, got " + signal.getAsInt());
        }
        if (coreDumped && code.isPresent()) {
            throw new IllegalArgumentException("only a signal dumps a core");
        }
    }

    /** It exited with {@code code}. */
    public static ExitStatus exited(int code) {
        return new ExitStatus(OptionalInt.of(code), OptionalInt.empty(), false);
    }

    /** Signal {@code signal} ended it, leaving a core dump or not. */
    public static ExitStatus killed(int signal, boolean coreDumped) {
        return new ExitStatus(OptionalInt.empty(), OptionalInt.of(signal), coreDumped);
    }

    /**
     * A POSIX wait status as {@code waitpid(2)} gives it: {@code WIFEXITED} gives the code,
     * {@code WIFSIGNALED} the signal and {@code WCOREDUMP}; empty for a status that says neither
     * (stopped, continued).
     */
    public static Optional<ExitStatus> ofWaitStatus(int status) {
        int low = status & 0x7f;
        if (low == 0) {
            return Optional.of(exited((status >> 8) & 0xff));
        }
        if (low != 0x7f && (status & 0xffff0000) == 0) {
            return Optional.of(killed(low, (status & 0x80) != 0));
        }
        return Optional.empty();
    }

    /** The name of {@link #signal()} on Linux ({@code SIGKILL}); empty for an exit or a number it does not name. */
    public Optional<String> signalName() {
        if (signal.isEmpty() || signal.getAsInt() >= SIGNALS.length) {
            return Optional.empty();
        }
        return Optional.of("SIG" + SIGNALS[signal.getAsInt()]);
    }

    /** Linux's signal names by number, 1 to 31. */
    private static final String[] SIGNALS = {"", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL",
        "USR1", "SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
        "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS"};

    /** {@code exited with status 3}, {@code killed by SIGKILL}, {@code killed by SIGSEGV (core dumped)}: for a person. */
    @Override
    public String toString() {
        if (code.isPresent()) {
            return "exited with status " + code.getAsInt();
        }
        return "killed by " + signalName().orElse("signal " + signal.getAsInt()) + (coreDumped ? " (core dumped)" : "");
    }
}
