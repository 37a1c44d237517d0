package dev.proclive.cli;

import java.time.Duration;

/** The command line's one PID parser and one seconds parser. */
final class Arguments {

    private Arguments() {
    }

    /**
     * A PID argument: ASCII digits with an optional leading {@code -}, within 64 bits. Not
     * {@code +1}, not other scripts' digits ({@code ١}, {@code １}), which {@link Long#parseLong}
     * would take.
     *
     * @throws BadInput saying what a PID must be
     */
    static long pid(String text) {
        int from = text.startsWith("-") ? 1 : 0;
        if (digits(text, from, text.length())) {
            try {
                return Long.parseLong(text);
            } catch (NumberFormatException e) {
                // too large: said below
            }
        }
        throw new BadInput("PID must be a 64-bit whole number in ASCII digits, not \"" + text + "\"");
    }

    /**
     * A number of seconds given to {@code option}: 1 to 9 ASCII digits, with {@code fractions} up to
     * three decimals ({@code 0.5}), at least {@code min} seconds.
     *
     * @throws Options.Usage saying what the option takes
     */
    static Duration seconds(String option, String value, boolean fractions, long min) {
        int dot = fractions ? value.indexOf('.') : -1;
        int whole = dot < 0 ? value.length() : dot;
        boolean ok = whole >= 1 && whole <= 9 && digits(value, 0, whole)
                && (dot < 0 || (value.length() - dot - 1 >= 1 && value.length() - dot - 1 <= 3
                        && digits(value, dot + 1, value.length())));
        long millis = 0;
        if (ok) {
            millis = Long.parseLong(value.substring(0, whole)) * 1000;
            if (dot >= 0) {
                String decimals = (value.substring(dot + 1) + "00").substring(0, 3);
                millis += Long.parseLong(decimals);
            }
        }
        if (!ok || millis < min * 1000) {
            String shape = fractions ? " is a number of seconds such as 30 or 0.5"
                    : " is a whole number of seconds" + (min > 0 ? " above 0" : "");
            boolean tooLong = whole > 9 && digits(value, 0, whole);
            throw new Options.Usage(option + shape + (tooLong ? ", at most 999999999 (nine digits)" : "") + ", not \""
                    + value + "\"");
        }
        return Duration.ofMillis(millis);
    }

    private static boolean digits(String text, int from, int to) {
        if (to <= from) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
