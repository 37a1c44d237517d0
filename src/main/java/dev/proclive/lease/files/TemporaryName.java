package dev.proclive.lease.files;

import dev.proclive.Identity;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code .NAME.PID-START.RANDOM.tmp}: the writer, so that a later one can tell a dead one's leftovers, and 64 random
 * bits, so that nobody can plant a file where the next one will be.
 */
public record TemporaryName(String lease, Identity writer, String random) {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern SHAPE = Pattern.compile("\\.(.+)\\.([0-9]{1,19})-([0-9.]*?)(?:\\.([0-9a-f]{16}))?\\.tmp");

    public static TemporaryName of(String lease, Identity writer) {
        return new TemporaryName(lease, writer, HexFormat.of().toHexDigits(RANDOM.nextLong()));
    }

    /** Empty unless {@code file} is a temporary file of some lease. */
    public static Optional<TemporaryName> parse(String file) {
        Matcher m = SHAPE.matcher(file);
        if (!m.matches()) {
            return Optional.empty();
        }
        long pid;
        try {
            pid = Long.parseLong(m.group(2));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        return Optional.of(new TemporaryName(m.group(1), new Identity(pid, m.group(3), "", "", "", ""),
                m.group(4) == null ? "" : m.group(4)));
    }

    public boolean writtenBy(Identity process) {
        return writer.pid() == process.pid() && writer.start().equals(process.start());
    }

    @Override
    public String toString() {
        return "." + lease + "." + writer.pid() + "-" + writer.start() + (random.isEmpty() ? "" : "." + random) + ".tmp";
    }
}
