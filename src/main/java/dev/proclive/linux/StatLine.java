package dev.proclive.linux;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessState;
import java.nio.charset.StandardCharsets;

/**
 * Decodes {@code /proc/PID/stat} (proc(5)): {@code pid (comm) state ppid … starttime …}. Pure
 * functions over bytes, so every corner is tested from fixtures.
 *
 * <p>The comm sits between the first {@code (} and the <em>last</em> {@code )}: it may itself
 * hold spaces, parentheses and newlines (15 bytes for user tasks, up to 63 for kernel threads).
 * The fields after it are separated by single spaces.
 */
final class StatLine {

    /** Field indexes counted from the first field after the comm (proc(5) numbers: 3, 4, 22). */
    static final int STATE = 0;
    static final int PPID = 1;
    static final int STARTTIME = 19;

    /** Results of {@link #compareStart}. */
    static final int MALFORMED = -1;
    static final int DIFFERENT = 0;
    static final int SAME = 1;

    private StatLine() {
    }

    /**
     * Decodes a whole line.
     *
     * @throws IllegalArgumentException naming what is malformed
     */
    static ProcessInfo parse(byte[] b, int len) {
        String problem = problem(b, len);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        int open = indexOf(b, len, (byte) '(');
        int close = lastIndexOf(b, len, (byte) ')');
        int state = field(b, len, close, STATE);
        int ppid = field(b, len, close, PPID);
        int start = field(b, len, close, STARTTIME);
        int startEnd = fieldEnd(b, len, start);
        return new ProcessInfo(
                parseDigits(b, 0, open - 1),
                parseDigits(b, ppid, fieldEnd(b, len, ppid)),
                new String(b, open + 1, close - open - 1, StandardCharsets.UTF_8),
                new String(b, start, startEnd - start, StandardCharsets.ISO_8859_1),
                state(b[state]));
    }

    /** The pid a well-formed line starts with, or -1. Allocates nothing. */
    static long pid(byte[] b, int len) {
        return problem(b, len) == null ? parseDigits(b, 0, indexOf(b, len, (byte) '(') - 1) : -1;
    }

    /**
     * What is wrong with a line, or null when it has what proclive reads: a pid, a
     * {@code (comm)}, a one-letter state and numeric ppid and starttime. Allocates nothing for a
     * well-formed line.
     */
    static String problem(byte[] b, int len) {
        int open = indexOf(b, len, (byte) '(');
        int close = lastIndexOf(b, len, (byte) ')');
        if (open < 1 || close < open) {
            return "no (comm) in the line";
        }
        if (b[open - 1] != ' ' || parseDigits(b, 0, open - 1) < 0) {
            return "no pid before the comm";
        }
        int state = field(b, len, close, STATE);
        int ppid = field(b, len, close, PPID);
        int start = field(b, len, close, STARTTIME);
        if (start < 0) {
            return "the line ends before field 22 (starttime)";
        }
        if (fieldEnd(b, len, state) != state + 1
                || parseDigits(b, ppid, fieldEnd(b, len, ppid)) < 0
                || parseDigits(b, start, fieldEnd(b, len, start)) < 0) {
            return "state, ppid or starttime is not what proc(5) describes";
        }
        return null;
    }

    /** The state byte of a line, or 0 when the line is malformed. */
    static byte stateByte(byte[] b, int len) {
        int close = lastIndexOf(b, len, (byte) ')');
        int state = close < 0 ? -1 : field(b, len, close, STATE);
        return state < 0 ? 0 : b[state];
    }

    /**
     * Compares the starttime field with a recorded fingerprint without decoding anything:
     * {@link #SAME}, {@link #DIFFERENT} or {@link #MALFORMED}.
     */
    static int compareStart(byte[] b, int len, String recorded) {
        int close = lastIndexOf(b, len, (byte) ')');
        int start = close < 0 ? -1 : field(b, len, close, STARTTIME);
        if (start < 0) {
            return MALFORMED;
        }
        int end = fieldEnd(b, len, start);
        if (end == start) {
            return MALFORMED;
        }
        if (end - start != recorded.length()) {
            return DIFFERENT;
        }
        for (int i = start; i < end; i++) {
            if (b[i] != recorded.charAt(i - start)) {
                return DIFFERENT;
            }
        }
        return SAME;
    }

    /** proc(5) states: Z zombie, X/x dead (reaped, being released); everything else can run. */
    static ProcessState state(byte state) {
        switch (state) {
            case 'Z':
                return ProcessState.ZOMBIE;
            case 'X':
            case 'x':
                return ProcessState.DEAD;
            default:
                return ProcessState.LIVE;
        }
    }

    /** Offset of field {@code index} after the comm that ends at {@code close}, or -1. */
    private static int field(byte[] b, int len, int close, int index) {
        int pos = close + 1;
        for (int i = 0; i <= index; i++) {
            if (pos >= len || b[pos] != ' ') {
                return -1;
            }
            pos++;
            if (i < index) {
                pos = fieldEnd(b, len, pos);
            }
        }
        return pos < len && b[pos] != ' ' && b[pos] != '\n' ? pos : -1;
    }

    private static int fieldEnd(byte[] b, int len, int from) {
        int i = from;
        while (i < len && b[i] != ' ' && b[i] != '\n') {
            i++;
        }
        return i;
    }

    /** The decimal number in {@code b[from, to)}, or -1 when it is empty, not digits or too long. */
    static long parseDigits(byte[] b, int from, int to) {
        if (from < 0 || to <= from || to - from > 18) {
            return -1;
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            int d = b[i] - '0';
            if (d < 0 || d > 9) {
                return -1;
            }
            value = value * 10 + d;
        }
        return value;
    }

    private static int indexOf(byte[] b, int len, byte c) {
        for (int i = 0; i < len; i++) {
            if (b[i] == c) {
                return i;
            }
        }
        return -1;
    }

    private static int lastIndexOf(byte[] b, int len, byte c) {
        for (int i = len - 1; i >= 0; i--) {
            if (b[i] == c) {
                return i;
            }
        }
        return -1;
    }
}
