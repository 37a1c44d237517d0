package dev.proclive.macos;

import java.util.Locale;
import java.util.Optional;

/**
 * The hardware UUID a Mac answers for {@code IOPlatformUUID} of its {@code IOPlatformExpertDevice}
 * registry entry, as a machine id: {@code 8-4-4-4-12} hex digits, upper case as {@code ioreg}
 * prints it. Anything else (null, empty, another shape, all zeros as some virtual machines
 * answer) is no id, and nothing is recorded.
 */
final class PlatformUuid {

    private static final int LENGTH = 36;

    private PlatformUuid() {
    }

    /** The machine id {@code value} names, or empty when it is none. */
    static Optional<String> parse(String value) {
        if (value == null || value.length() != LENGTH) {
            return Optional.empty();
        }
        boolean zeros = true;
        for (int i = 0; i < LENGTH; i++) {
            char c = value.charAt(i);
            if (i == 8 || i == 13 || i == 18 || i == 23) {
                if (c != '-') {
                    return Optional.empty();
                }
            } else if (!(c >= '0' && c <= '9' || c >= 'A' && c <= 'F' || c >= 'a' && c <= 'f')) {
                return Optional.empty();
            } else {
                zeros &= c == '0';
            }
        }
        return zeros ? Optional.empty() : Optional.of(value.toUpperCase(Locale.ROOT));
    }
}
