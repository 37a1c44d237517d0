package dev.proclive.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What the {@code proclive} process needs before and after any command: JNA kept quiet, the
 * arguments as the UTF-8 they came as, and the last word when something escaped a command.
 */
final class Console {

    private Console() {
    }

    /**
     * This process's JNA loads only the C library, by the name the dynamic loader knows: without a
     * platform path it does not run {@code ldconfig -p} to list the loader's paths.
     */
    static void quietJna() {
        if (System.getProperty("jna.platform.library.path") == null) {
            System.setProperty("jna.platform.library.path", "");
        }
    }

    /**
     * The arguments as the UTF-8 they came as, whatever the locale: under a POSIX locale the JVM
     * decodes {@code é}'s bytes to U+FFFD, so where an argument holds one, it is read again from
     * {@code cmdline} (Linux: the process's own arguments, NUL-separated, main's last), each
     * checked to decode with {@code locale} to the argument the JVM gave. Unchanged
     * when nothing was lost, when {@code cmdline} cannot be read or does not line up with
     * {@code args}, or when the bytes are not UTF-8 either.
     */
    static String[] utf8Arguments(String[] args, String cmdline, java.nio.charset.Charset locale) {
        boolean lost = false;
        for (String a : args) {
            lost |= a.indexOf('\uFFFD') >= 0;
        }
        if (!lost) {
            return args;
        }
        byte[] bytes;
        try {
            bytes = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(cmdline));
        } catch (IOException | RuntimeException e) {
            return args;
        }
        List<byte[]> parts = new java.util.ArrayList<>();
        for (int from = 0, i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                parts.add(java.util.Arrays.copyOfRange(bytes, from, i));
                from = i + 1;
            }
        }
        if (parts.size() < args.length) {
            return args;
        }
        String[] utf8 = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            byte[] raw = parts.get(parts.size() - args.length + i);
            if (!new String(raw, locale).equals(args[i])) {
                return args; // not these arguments: leave them as the JVM gave them
            }
            try {
                utf8[i] = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(raw)).toString();
            } catch (java.nio.charset.CharacterCodingException notUtf8) {
                return args;
            }
        }
        return utf8;
    }

    /** The charset the JVM decoded its arguments with: the locale's ({@code sun.jnu.encoding}). */
    static java.nio.charset.Charset argumentCharset() {
        String jnu = System.getProperty("sun.jnu.encoding");
        try {
            return jnu != null && java.nio.charset.Charset.isSupported(jnu) ? java.nio.charset.Charset.forName(jnu)
                    : java.nio.charset.Charset.defaultCharset();
        } catch (IllegalArgumentException e) {
            return java.nio.charset.Charset.defaultCharset();
        }
    }

    /**
     * What nothing else caught: one line on stderr and exit 70 (74 for an I/O failure), never a
     * stack trace and never an exit code that means a verdict.
     */
    static int lastResort(PrintStream err, Throwable e) {
        if (e instanceof java.io.UncheckedIOException io) {
            Say.line(err, "I/O failure: " + io.getCause());
            return ExitCode.IO_FAILURE.code();
        }
        Say.line(err, "internal error, please report it: " + e);
        return ExitCode.INTERNAL.code();
    }
}
