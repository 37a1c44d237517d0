package dev.proclive.lease;

import dev.proclive.text.OneLine;

/** How lease messages quote what they found: the one rule, {@link OneLine#quote}. */
final class LeaseText {

    private LeaseText() {
    }

    /**
     * {@code text} in double quotes, with quotes, backslashes and control characters escaped as in
     * JSON, so that a message quoting a record, a name or a file stays on one line.
     */
    static String quote(String text) {
        return OneLine.quote(text);
    }
}
