package dev.proclive.linux;

/**
 * The few lines of {@code /proc/PID/status} (proc(5)) proclive needs. A value that is absent
 * reads as -1: older kernels have no {@code NSpid:} (before 4.1).
 *
 * @param tgid       {@code Tgid:}, the process a task belongs to
 * @param threads    {@code Threads:}, how many threads the process has
 * @param nspidCount how many ids {@code NSpid:} lists: one per PID namespace from the one
 *                   {@code /proc} was mounted for down to the task's own
 * @param capEff     {@code CapEff:}, the effective capability mask
 * @param uid        the effective user id, the second of {@code Uid:}'s four
 */
record StatusFile(long tgid, long threads, int nspidCount, long capEff, long uid) {

    /** The line that lists a task's pid in each PID namespace, outermost first. */
    static final String NSPID = "NSpid:";

    /** capability.h: CAP_SYS_PTRACE, which lets a task see processes {@code hidepid} hides. */
    static final int CAP_SYS_PTRACE = 19;

    static StatusFile parse(byte[] b, int len) {
        long tgid = -1;
        long threads = -1;
        int nspid = ProcReader.wordsAfter(b, len, NSPID);
        long capEff = -1;
        long uid = -1;
        int line = 0;
        while (line < len) {
            int end = line;
            while (end < len && b[end] != '\n') {
                end++;
            }
            if (ProcReader.startsWith(b, line, end, "Tgid:")) {
                tgid = ProcReader.parseDigits(b, skipBlanks(b, line + 5, end), end);
            } else if (ProcReader.startsWith(b, line, end, "Threads:")) {
                threads = ProcReader.parseDigits(b, skipBlanks(b, line + 8, end), end);
            } else if (ProcReader.startsWith(b, line, end, "CapEff:")) {
                capEff = parseHex(b, skipBlanks(b, line + 7, end), end);
            } else if (ProcReader.startsWith(b, line, end, "Uid:")) {
                uid = secondWord(b, line + 4, end);
            }
            line = end + 1;
        }
        return new StatusFile(tgid, threads, nspid, capEff, uid);
    }

    /** Whether this task may look at every process even where {@code hidepid} hides them. */
    boolean canPtraceAny() {
        return capEff >= 0 && (capEff & (1L << CAP_SYS_PTRACE)) != 0;
    }

    private static int skipBlanks(byte[] b, int from, int to) {
        int i = from;
        while (i < to && (b[i] == ' ' || b[i] == '\t')) {
            i++;
        }
        return i;
    }

    /** The second blank-separated word of a line as a decimal number, or -1. */
    private static long secondWord(byte[] b, int from, int to) {
        int first = skipBlanks(b, from, to);
        int i = first;
        while (i < to && b[i] != ' ' && b[i] != '\t') {
            i++;
        }
        int second = skipBlanks(b, i, to);
        int end = second;
        while (end < to && b[end] != ' ' && b[end] != '\t') {
            end++;
        }
        return end > second ? ProcReader.parseDigits(b, second, end) : -1;
    }

    private static long parseHex(byte[] b, int from, int to) {
        if (to <= from || to - from > 16) {
            return -1;
        }
        long value = 0;
        for (int i = from; i < to; i++) {
            int d = Character.digit(b[i], 16);
            if (d < 0) {
                return -1;
            }
            value = (value << 4) | d;
        }
        return value;
    }
}
