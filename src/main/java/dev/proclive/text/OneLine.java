package dev.proclive.text;

/**
 * The one quoting rule for what proclive says: whatever a message quotes (a record, a name, a
 * file, a command) stays on one line. Control characters (C0, DEL, C1, and the Unicode line and
 * paragraph separators) are escaped as in JSON: {@code \n}, {@code \r}, {@code \t}, else
 * {@code \}{@code uXXXX}.
 */
public final class OneLine {

    private OneLine() {
    }

    /** {@code text} with its control characters escaped, nothing else changed. */
    public static String escape(String text) {
        return append(new StringBuilder(text.length()), text, false).toString();
    }

    /** {@code text} in double quotes, with quotes, backslashes and control characters escaped as in JSON. */
    public static String quote(String text) {
        return append(new StringBuilder(text.length() + 2).append('"'), text, true).append('"').toString();
    }

    private static StringBuilder append(StringBuilder b, String text, boolean quoted) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted && (c == '"' || c == '\\')) {
                b.append('\\').append(c);
            } else if (c == '\n') {
                b.append("\\n");
            } else if (c == '\r') {
                b.append("\\r");
            } else if (c == '\t') {
                b.append("\\t");
            } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b;
    }
}
