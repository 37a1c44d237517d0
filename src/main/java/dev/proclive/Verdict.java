package dev.proclive;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * The answer of {@link ProcLive#explain}: the {@link Reason} behind it, the {@link Liveness} that
 * reason gives, and a short detail for a person (a log line, a {@code doctor} screen). Only
 * {@code liveness} and {@code reason} are meant for code; the wording of {@code detail} may change.
 * The liveness is derived from the reason, so a verdict cannot say ALIVE for a reason of DEAD.
 *
 * @param reason why
 * @param detail a short human explanation, never null
 * @param exit   how the process ended, where the kernel told the exit watch ({@link ProcLive#onExit});
 *               empty otherwise (a check, an older kernel, a process whose end was not watched)
 */
public record Verdict(Reason reason, String detail, Optional<ExitStatus> exit) {

    /**
     * @throws NullPointerException if {@code reason} or {@code exit} is null
     */
    public Verdict {
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(exit, "exit");
        detail = detail == null ? "" : detail;
    }

    /** A verdict without an exit status. */
    public Verdict(Reason reason, String detail) {
        this(reason, detail, Optional.empty());
    }

    /** A verdict for {@code reason}; the same as the constructor. */
    public static Verdict of(Reason reason, String detail) {
        return new Verdict(reason, detail);
    }

    /** This verdict, saying how the process ended. */
    public Verdict withExit(ExitStatus status) {
        return new Verdict(reason, detail, Optional.of(status));
    }

    /** The answer: {@code reason().liveness()}. */
    public Liveness liveness() {
        return reason.liveness();
    }

    /** {@code alive (matched): pid 4242 (node) is running, started at 123456}: the CLI's words. */
    @Override
    public String toString() {
        return name(liveness()) + " (" + name(reason) + ")" + (detail.isEmpty() ? "" : ": " + detail)
                + exit.map(e -> "; " + e).orElse("");
    }

    private static String name(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
