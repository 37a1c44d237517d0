package dev.proclive.lease;

/** How messages quote what they found: on one line, whatever bytes it held. */
final class LeaseText {

    private LeaseText() {
    }

    /**
     * {@code text} in double quotes, with quotes, backslashes and control characters escaped as in
     * JSON, so that a message quoting a record, a name or a file stays on one line.
     */
    static String quote(String text) {
        StringBuilder b = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
