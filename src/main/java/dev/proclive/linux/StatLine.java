package dev.proclive.linux;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessState;
import java.nio.charset.StandardCharsets;

/**
 * A {@code /proc/PID/stat} line (proc(5)), {@code pid (comm) state ppid … starttime …}, located
 * in a byte buffer: {@link #locate} finds the fields once, in one pass, and the accessors read
 * them in place. Pure over bytes, so every corner is tested from fixtures. Mutable and reused by
 * one thread.
 *
 * <p>The comm sits between the first {@code (} and the <em>last</em> {@code )}: it may itself
 * hold spaces, parentheses and newlines (15 bytes for user tasks, up to 63 for kernel threads).
 * The fields after it are separated by single spaces.
 */
final class StatLine {

    /** Field indexes counted from the first field after the comm (proc(5) numbers: 3, 4, 9, 22). */
    static final int STATE = 0;
    static final int PPID = 1;
    static final int FLAGS = 6;
    static final int STARTTIME = 19;

    /** {@code PF_EXITING} in the flags (include/linux/sched.h): the process is in do_exit. */
    static final long PF_EXITING = 0x4;

    /** {@code PF_KTHREAD} in the flags: a kernel thread, which has no user memory, so no environment. */
    static final long PF_KTHREAD = 0x00200000;

    private byte[] b;
    private int open;
    private int close;
    private int state;
    private int ppid;
    private int ppidEnd;
    private int flags;
    private int flagsEnd;
    private int start;
    private int startEnd;

    /**
     * Finds the fields of the line in {@code b[0, len)}: null when it has what proclive reads (a
     * pid, a {@code (comm)}, a one-letter state, numeric ppid and starttime), else what is wrong.
     * Allocates nothing for a well-formed line.
     */
    String locate(byte[] buffer, int len) {
        this.b = buffer;
        open = -1;
        close = -1;
        for (int i = 0; i < len; i++) {
            byte c = buffer[i];
            if (c == '(' && open < 0) {
                open = i;
            } else if (c == ')') {
                close = i;
            }
        }
        if (open < 1 || close < open) {
            return "no (comm) in the line";
        }
        if (buffer[open - 1] != ' ' || parseDigits(buffer, 0, open - 1) < 0) {
            return "no pid before the comm";
        }
        // Walk the fields after the comm once: " S 1234 … starttime …"
        int pos = close + 1;
        state = -1;
        start = -1;
        for (int field = 0; field <= STARTTIME; field++) {
            if (pos >= len || buffer[pos] != ' ') {
                return "the line ends before field 22 (starttime)";
            }
            int from = pos + 1;
            int end = fieldEnd(buffer, len, from);
            if (end == from) {
                return "the line ends before field 22 (starttime)";
            }
            if (field == STATE) {
                state = from;
                if (end != from + 1) {
                    return "the state is not one letter";
                }
            } else if (field == PPID) {
                ppid = from;
                ppidEnd = end;
            } else if (field == FLAGS) {
                flags = from;
                flagsEnd = end;
            } else if (field == STARTTIME) {
                start = from;
                startEnd = end;
            }
            pos = end;
        }
        if (parseDigits(buffer, ppid, ppidEnd) < 0 || parseDigits(buffer, start, startEnd) < 0) {
            return "ppid or starttime is not a number";
        }
        return null;
    }

    /** The pid the located line starts with. */
    long pid() {
        return parseDigits(b, 0, open - 1);
    }

    /** The state letter of the located line. */
    byte stateByte() {
        return b[state];
    }

    /**
     * Whether the located line is of a process that is ending: a zombie, dead, or in do_exit
     * ({@code PF_EXITING}; its memory, environment included, may be released already). Flags that
     * are not a number count as ending: nothing then proves it lives.
     */
    boolean ending() {
        long f = parseDigits(b, flags, flagsEnd);
        return state(b[state]) != ProcessState.LIVE || f < 0 || (f & PF_EXITING) != 0;
    }

    /** Whether the located line is of a kernel thread ({@code PF_KTHREAD}). */
    boolean kernelThread() {
        long f = parseDigits(b, flags, flagsEnd);
        return f >= 0 && (f & PF_KTHREAD) != 0;
    }

    /** The starttime field of the located line, in clock ticks as shown to this process. */
    long startTicks() {
        return parseDigits(b, start, startEnd);
    }

    /**
     * Whether the located line says exactly what {@code info} holds (pid, ASCII name, state,
     * parent, start as shown), so a caller polling one process can keep its last decode instead of
     * allocating a new one. A name with non-ASCII bytes never matches: it is simply decoded again.
     */
    boolean says(ProcessInfo info) {
        return info.pid() == pid()
                && state(b[state]) == info.state()
                && parseDigits(b, ppid, ppidEnd) == info.parentPid()
                && asciiEquals(open + 1, close, info.name())
                && asciiEquals(start, startEnd, info.start());
    }

    private boolean asciiEquals(int from, int to, String text) {
        if (to - from != text.length()) {
            return false;
        }
        for (int i = from; i < to; i++) {
            if (b[i] < 0 || b[i] != text.charAt(i - from)) {
                return false;
            }
        }
        return true;
    }

    /** The located line, decoded. */
    ProcessInfo info() {
        return new ProcessInfo(
                pid(),
                parseDigits(b, ppid, ppidEnd),
                new String(b, open + 1, close - open - 1, StandardCharsets.UTF_8),
                new String(b, start, startEnd - start, StandardCharsets.ISO_8859_1),
                state(b[state]));
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
}
