package dev.proclive.linux;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessState;

/**
 * A {@code /proc/PID/stat} line (proc(5)) read by someone else than a {@link ProcReader} and
 * located in their buffer: the reader's own parser ({@link ProcReader#locate}), whose rules and
 * corners are written there, for a scan that reads with NIO. Mutable and reused by one thread.
 */
final class StatLine {

    /** Field indexes counted from the first field after the comm (proc(5) numbers: 3, 4, 9, 22). */
    static final int STATE = ProcReader.STATE;
    static final int PPID = ProcReader.PPID;
    static final int FLAGS = ProcReader.FLAGS;
    static final int STARTTIME = ProcReader.STARTTIME;

    /** {@code PF_EXITING} in the flags (include/linux/sched.h): the process is in do_exit. */
    static final long PF_EXITING = ProcReader.PF_EXITING;

    /** {@code PF_KTHREAD} in the flags: a kernel thread, which has no user memory, so no environment. */
    static final long PF_KTHREAD = ProcReader.PF_KTHREAD;

    private final ProcReader line = new ProcReader(null);

    /** {@link ProcReader#locate}: null when the line has what proclive reads, else what is wrong. */
    String locate(byte[] buffer, int len) {
        return line.locate(buffer, len);
    }

    /** The pid the located line starts with. */
    long pid() {
        return line.pid();
    }

    /** The state letter of the located line. */
    byte stateByte() {
        return line.stateByte();
    }

    /** {@link ProcReader#ending()}. */
    boolean ending() {
        return line.ending();
    }

    /** {@link ProcReader#kernelThread()}. */
    boolean kernelThread() {
        return line.kernelThread();
    }

    /** The starttime field of the located line, in clock ticks as shown to this process. */
    long startTicks() {
        return line.startTicks();
    }

    /** {@link ProcReader#says(ProcessInfo)}. */
    boolean says(ProcessInfo info) {
        return line.says(info);
    }

    /** The located line, decoded. */
    ProcessInfo info() {
        return line.info();
    }

    /** {@link ProcReader#state(byte)}. */
    static ProcessState state(byte state) {
        return ProcReader.state(state);
    }

    /** {@link ProcReader#parseDigits}. */
    static long parseDigits(byte[] b, int from, int to) {
        return ProcReader.parseDigits(b, from, to);
    }
}
