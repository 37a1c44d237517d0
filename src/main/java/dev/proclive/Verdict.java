package dev.proclive;

import java.util.Objects;

/**
 * The answer of {@link ProcLive#explain}: a {@link Liveness}, the {@link Reason} behind it and a
 * short detail for a person (a log line, a {@code doctor} screen). Only {@code liveness} and
 * {@code reason} are meant for code; the wording of {@code detail} may change.
 *
 * @param liveness the answer; always {@code reason.liveness()}
 * @param reason   why
 * @param detail   a short human explanation, never null
 */
public record Verdict(Liveness liveness, Reason reason, String detail) {

    /**
     * @throws NullPointerException     if {@code liveness} or {@code reason} is null
     * @throws IllegalArgumentException if {@code reason} does not belong to {@code liveness}
     */
    public Verdict {
        Objects.requireNonNull(liveness, "liveness");
        Objects.requireNonNull(reason, "reason");
        if (reason.liveness() != liveness) {
            throw new IllegalArgumentException(
                    "reason " + reason + " gives " + reason.liveness() + ", not " + liveness);
        }
        detail = detail == null ? "" : detail;
    }

    /** A verdict for {@code reason}, with the liveness it implies. */
    public static Verdict of(Reason reason, String detail) {
        Objects.requireNonNull(reason, "reason");
        return new Verdict(reason.liveness(), reason, detail);
    }

    /** {@code alive (matched): pid 4242 (node) is running, started at 123456}: the CLI's words. */
    @Override
    public String toString() {
        return name(liveness) + " (" + name(reason) + ")" + (detail.isEmpty() ? "" : ": " + detail);
    }

    /** The lowercase word the CLI and the JSON of a lease record use. */
    private static String name(Enum<?> value) {
        return value.name().toLowerCase(java.util.Locale.ROOT);
    }
}
