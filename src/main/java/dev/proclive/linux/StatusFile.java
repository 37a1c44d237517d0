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

    /** capability.h: CAP_SYS_PTRACE, which lets a task see processes {@code hidepid} hides. */
    static final int CAP_SYS_PTRACE = 19;

    static StatusFile parse(byte[] b, int len) {
        long tgid = -1;
        long threads = -1;
        int nspid = -1;
        long capEff = -1;
        long uid = -1;
        int line = 0;
        while (line < len) {
            int end = line;
            while (end < len && b[end] != '\n') {
                end++;
            }
            if (startsWith(b, line, end, "Tgid:")) {
                tgid = StatLine.parseDigits(b, skipBlanks(b, line + 5, end), end);
            } else if (startsWith(b, line, end, "Threads:")) {
                threads = StatLine.parseDigits(b, skipBlanks(b, line + 8, end), end);
            } else if (startsWith(b, line, end, "NSpid:")) {
                nspid = countWords(b, line + 6, end);
            } else if (startsWith(b, line, end, "CapEff:")) {
                capEff = parseHex(b, skipBlanks(b, line + 7, end), end);
            } else if (startsWith(b, line, end, "Uid:")) {
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

    private static boolean startsWith(byte[] b, int from, int to, String prefix) {
        if (to - from < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (b[from + i] != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static int skipBlanks(byte[] b, int from, int to) {
        int i = from;
        while (i < to && (b[i] == ' ' || b[i] == '\t')) {
            i++;
        }
        return i;
    }

    private static int countWords(byte[] b, int from, int to) {
        int words = 0;
        boolean inWord = false;
        for (int i = from; i < to; i++) {
            boolean blank = b[i] == ' ' || b[i] == '\t';
            if (!blank && !inWord) {
                words++;
            }
            inWord = !blank;
        }
        return words;
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
        return end > second ? StatLine.parseDigits(b, second, end) : -1;
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
