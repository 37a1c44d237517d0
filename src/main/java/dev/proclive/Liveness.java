package dev.proclive;

/**
 * Whether a recorded process is still the one running: the answer of {@link ProcLive#check}.
 *
 * <p>{@link #UNKNOWN} is an answer, not an error: the library could prove neither
 * {@link #ALIVE} nor {@link #DEAD} (another host, a hidden {@code /proc}, an unsupported
 * platform…), and the caller should fall back to whatever it did before, typically a timeout.
 */
public enum Liveness {
    /** The exact process that was recorded is running. */
    ALIVE,
    /** The recorded process is gone: it exited, is a zombie, its PID was reused, or the machine rebooted. */
    DEAD,
    /** Neither could be proven; see {@link Verdict#reason()} for why. */
    UNKNOWN;

    private final String json = name().toLowerCase(java.util.Locale.ROOT);

    /** The word JSON output uses: {@code alive}, {@code dead}, {@code unknown}. */
    public String json() {
        return json;
    }
}
