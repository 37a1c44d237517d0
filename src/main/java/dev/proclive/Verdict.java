package dev.proclive;

import java.util.Locale;
import java.util.Objects;

/**
 * The answer of {@link ProcLive#explain}: the {@link Reason} behind it, the {@link Liveness} that
 * reason gives, and a short detail for a person (a log line, a {@code doctor} screen). Only
 * {@code liveness} and {@code reason} are meant for code; the wording of {@code detail} may change.
 * The liveness is derived from the reason, so a verdict cannot say ALIVE for a reason of DEAD.
 *
 * @param reason why
 * @param detail a short human explanation, never null
 */
public record Verdict(Reason reason, String detail) {

    /**
     * @throws NullPointerException if {@code reason} is null
     */
    public Verdict {
        Objects.requireNonNull(reason, "reason");
        detail = detail == null ? "" : detail;
    }

    /** A verdict for {@code reason}; the same as the constructor. */
    public static Verdict of(Reason reason, String detail) {
        return new Verdict(reason, detail);
    }

    /** The answer: {@code reason().liveness()}. */
    public Liveness liveness() {
        return reason.liveness();
    }

    /** {@code alive (matched): pid 4242 (node) is running, started at 123456}: the CLI's words. */
    @Override
    public String toString() {
        return name(liveness()) + " (" + name(reason) + ")" + (detail.isEmpty() ? "" : ": " + detail);
    }

    private static String name(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }
}
