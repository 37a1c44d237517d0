package dev.proclive.linux;

import java.util.Optional;

/**
 * The boottime offset of this process's time namespace (time_namespaces(7)), in clock ticks.
 * Field 22 of {@code /proc/PID/stat} is shown shifted by the <em>reader's</em> offset (seen: 18
 * outside, 100018 inside {@code unshare -T --boottime 1000}); the fingerprint proclive records is
 * the tick count of the initial time namespace, so the offset is taken off when recording and when
 * comparing, and identities recorded inside and outside compare equal.
 *
 * <p>The kernel converts {@code start + offset} nanoseconds to ticks, rounding down; an offset that
 * is not a whole number of ticks therefore leaves the true start either the tick computed or the
 * one before it. Both match then: inside such a namespace the tick before, and everywhere the
 * tick after what the kernel shows ({@link #recordedATickLate}), as a recorder there may write it.
 * For such a recording the fingerprint's floor is two ticks (20 ms), not one; three judged inside
 * another such namespace.
 *
 * @param ticks     whole ticks of the offset, rounded down
 * @param ambiguous whether the offset has a fraction of a tick
 */
record BootOffset(long ticks, boolean ambiguous) {

    /** The initial time namespace, and kernels without time namespaces. */
    static final BootOffset NONE = new BootOffset(0, false);

    /** USER_HZ: the kernel reports process times in hundredths of a second on every architecture proclive runs on. */
    static final long NANOS_PER_TICK = 10_000_000L;

    /**
     * The offset in {@code /proc/self/timens_offsets}: lines {@code CLOCK SECONDS NANOSECONDS},
     * of which {@code boottime} counts. Empty when that line is missing or does not parse.
     */
    static Optional<BootOffset> parse(String offsets) {
        for (String line : offsets.split("\n")) {
            String[] f = words(line.trim());
            if (f.length == 3 && f[0].equals("boottime")) {
                try {
                    long seconds = Long.parseLong(f[1]);
                    long nanos = Long.parseLong(f[2]);
                    if (nanos < 0 || nanos >= 1_000_000_000L) {
                        return Optional.empty();
                    }
                    return Optional.of(of(Math.addExact(Math.multiplyExact(seconds, 1_000_000_000L), nanos)));
                } catch (ArithmeticException | NumberFormatException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    static BootOffset of(long offsetNanos) {
        return new BootOffset(Math.floorDiv(offsetNanos, NANOS_PER_TICK), Math.floorMod(offsetNanos, NANOS_PER_TICK) != 0);
    }

    /**
     * Shown start ticks past any uptime (292 years): a process that started before a negative
     * offset's namespace begins has {@code start + offset} below zero, which the kernel shows wrapped
     * around as an unsigned count (seen: 1844679418311 for 5010941).
     */
    static boolean wrapped(long shownTicks) {
        return shownTicks < 0 || shownTicks > Long.MAX_VALUE / NANOS_PER_TICK;
    }

    /**
     * Whether {@code recorded} is the tick after {@code current} ({@code current} as the kernel
     * writes it): what a recorder in a namespace whose offset has a fraction of a tick may write for
     * any process, whose true start is then either. Accepted everywhere, as nothing tells where an
     * identity was recorded; it widens nothing for an exact recording, since a later process with the
     * pid cannot have started a tick before the recorded one, and a late one has the floor above.
     */
    static boolean recordedATickLate(String recorded, String current) {
        try {
            return recorded.equals(Long.toString(Math.addExact(Long.parseLong(current), 1)));
        } catch (ArithmeticException | NumberFormatException e) {
            return false;
        }
    }

    /** Whether start times are shown as they are recorded: nothing to convert. */
    boolean none() {
        return ticks == 0 && !ambiguous;
    }

    /** The fingerprint of a start time shown as {@code shownTicks} to this process. */
    String fingerprint(long shownTicks) {
        return Long.toString(shownTicks - ticks);
    }

    /**
     * Whether a recorded fingerprint names the process whose fingerprint reads {@code current}
     * here: the same text, or, under an offset with a fraction of a tick, the tick before.
     */
    boolean sameStart(String recorded, String current) {
        if (recorded.equals(current)) {
            return true;
        }
        if (!ambiguous) {
            return false;
        }
        try {
            return recorded.equals(Long.toString(Long.parseLong(current) - 1));
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The words of {@code line}, split at runs of spaces and tabs (no regular expression on the check path). */
    private static String[] words(String line) {
        java.util.List<String> words = new java.util.ArrayList<>(3);
        int at = 0;
        while (at < line.length()) {
            while (at < line.length() && (line.charAt(at) == ' ' || line.charAt(at) == '\t')) {
                at++;
            }
            int from = at;
            while (at < line.length() && line.charAt(at) != ' ' && line.charAt(at) != '\t') {
                at++;
            }
            if (at > from) {
                words.add(line.substring(from, at));
            }
        }
        return words.toArray(new String[0]);
    }
}
