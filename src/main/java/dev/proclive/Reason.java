package dev.proclive;

/**
 * Why a {@link Verdict} came out as it did. Each reason belongs to exactly one {@link Liveness}.
 *
 * <p>The order of the checks that produce them is fixed (first match wins):
 * {@link #NO_IDENTITY}, {@link #OTHER_HOST}, {@link #OTHER_PID_NAMESPACE}, the boot id
 * ({@link #IO_ERROR} or {@link #REBOOTED}), reading the process ({@link #EXITED},
 * {@link #ACCESS_DENIED}, {@link #UNSUPPORTED_PLATFORM}, {@link #IO_ERROR}),
 * {@link #NO_FINGERPRINT}, {@link #PID_REUSED}, {@link #ZOMBIE}, and finally {@link #MATCHED}.
 */
public enum Reason {
    /** The PID is running and its start fingerprint equals the recorded one. */
    MATCHED(Liveness.ALIVE),

    /** No process has the recorded PID any more. */
    EXITED(Liveness.DEAD),
    /** The process has exited and waits to be reaped by its parent; it will never run again. */
    ZOMBIE(Liveness.DEAD),
    /** A process has the recorded PID, but it started at another time: the PID was reused. */
    PID_REUSED(Liveness.DEAD),
    /** The machine booted since the identity was recorded. */
    REBOOTED(Liveness.DEAD),

    /** The identity has no usable PID (zero or negative). */
    NO_IDENTITY(Liveness.UNKNOWN),
    /** The identity was recorded on another host, or this host's name cannot be read. */
    OTHER_HOST(Liveness.UNKNOWN),
    /** The identity was recorded in another PID namespace, or {@code /proc} shows another namespace's PIDs. */
    OTHER_PID_NAMESPACE(Liveness.UNKNOWN),
    /** The process exists but the identity holds no start fingerprint: a bare PID proves nothing. */
    NO_FINGERPRINT(Liveness.UNKNOWN),
    /** The process may exist but this process is not allowed to look at it. */
    ACCESS_DENIED(Liveness.UNKNOWN),
    /** This platform cannot introspect processes. */
    UNSUPPORTED_PLATFORM(Liveness.UNKNOWN),
    /** Reading the process, the boot id or the host failed in an unexpected way. */
    IO_ERROR(Liveness.UNKNOWN);

    private final Liveness liveness;
    private final String json;

    Reason(Liveness liveness) {
        this.liveness = liveness;
        this.json = name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The word JSON output uses: {@code matched}, {@code pid_reused}… */
    public String json() {
        return json;
    }

    /** The reason whose {@link #json()} word is {@code word}, if any. */
    public static java.util.Optional<Reason> fromJson(String word) {
        for (Reason r : values()) {
            if (r.json.equals(word)) {
                return java.util.Optional.of(r);
            }
        }
        return java.util.Optional.empty();
    }

    /** The liveness this reason supports. */
    public Liveness liveness() {
        return liveness;
    }
}
