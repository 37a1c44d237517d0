package dev.proclive.linux;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessState;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * One thread's reader of small {@code /proc} files into a reused buffer, and the locator of the
 * {@code /proc/PID/stat} line it read there. The happy path is a plain {@link FileInputStream}
 * (cheapest on first use); only after it failed does NIO read the file again, because
 * {@code java.io} reports ENOENT, EACCES and EPERM alike while NIO tells them apart. Not
 * thread-safe: one per thread.
 *
 * <p><b>The stat line</b> (proc(5)), {@code pid (comm) state ppid … starttime …}: {@link #locate}
 * finds its fields once, in one pass, and the accessors read them in place. Pure over bytes, so
 * every corner is tested from fixtures ({@link StatLine} is the same parser for a line read
 * elsewhere). The comm sits between the first {@code (} and the <em>last</em> {@code )}: it may
 * itself hold spaces, parentheses and newlines (15 bytes for user tasks, up to 63 for kernel
 * threads). The fields after it are separated by single spaces. Reader and line are one class: a
 * hook's cold JVM loads each class it uses at a cost (about a third of a millisecond here).
 */
final class ProcReader {

    /*
     * How a read ends: ints, not an enum, on the measured hot path of a hook's cold JVM (one class
     * fewer to load there).
     */
    /** The file was read. */
    static final int OK = 0;
    /** ENOENT: no such file. */
    static final int ABSENT = 1;
    /**
     * EACCES, or a file that will not open in a directory that is there: EPERM, which
     * {@code hidepid=noaccess} answers and NIO reports as a plain FileSystemException.
     */
    static final int DENIED = 2;
    /** Anything else. */
    static final int FAILED = 3;

    /** Made by the first read: a {@link StatLine} locates lines in buffers of its own. */
    private byte[] buffer;
    private int length;
    private String error = "";
    private StringBuilder path;
    private long lastPid;
    private String lastLeaf;
    private String lastPath;

    /** Told each path this reader opens; null in production (tests count reads with it). */
    private final Consumer<String> opened;

    ProcReader(Consumer<String> opened) {
        this.opened = opened;
    }

    /** The last process decoded from a stat line by this reader, reused while its line says the same. */
    ProcessInfo lastInfo;

    /**
     * {@code root/pid/leaf}. The last one is kept: a caller that polls one process builds its
     * path once. {@code root} is the same for the life of a reader.
     */
    String path(String root, long pid, String leaf) {
        if (pid == lastPid && leaf.equals(lastLeaf)) {
            return lastPath;
        }
        if (path == null) {
            path = new StringBuilder(64);
        }
        path.setLength(0);
        lastPath = path.append(root).append('/').append(pid).append('/').append(leaf).toString();
        lastPid = pid;
        lastLeaf = leaf;
        return lastPath;
    }

    /**
     * Reads {@code path}: a whole file, or, when {@code whole} is false, up to its first full line
     * (a {@code stat} file is one line, and one read(2) returns it whole).
     *
     * @return how it ended, {@link #OK} or another of the constants above; see {@link #error()}
     *         when not OK
     */
    int read(String path, boolean whole) {
        try {
            fill(path, whole);
            return OK;
        } catch (Exception e) { // IOException, not named: the verifier would load it with this class
            return Errno.classify(this, path);
        }
    }

    /**
     * Reads {@code path} as {@link #read} does, without telling why a read failed: false then. For
     * a caller with another way to go when a read fails, which need not pay for NIO's second read.
     */
    boolean tryRead(String path, boolean whole) {
        try {
            fill(path, whole);
            return true;
        } catch (Exception e) { // as in read
            return false;
        }
    }

    private void fill(String path, boolean whole) throws IOException {
        if (opened != null) {
            opened.accept(path);
        }
        if (buffer == null) {
            buffer = new byte[2048];
        }
        try (FileInputStream in = new FileInputStream(path)) {
            int n = 0;
            while (true) {
                if (n == buffer.length) {
                    buffer = Arrays.copyOf(buffer, buffer.length * 2);
                }
                int got = in.read(buffer, n, buffer.length - n);
                if (got < 0) {
                    break;
                }
                n += got;
                if (!whole && buffer[n - 1] == '\n') {
                    break;
                }
            }
            length = n;
        }
    }

    /**
     * Reads a file again through NIO, whose exceptions say which errno it was: a class of its own,
     * loaded only when a read failed (the verifier loads every exception type a method catches).
     */
    private static final class Errno {
        static int classify(ProcReader r, String file) {
            try {
                byte[] data = Files.readAllBytes(Path.of(file));
                if (r.buffer == null || data.length > r.buffer.length) {
                    r.buffer = new byte[data.length];
                }
                System.arraycopy(data, 0, r.buffer, 0, data.length);
                r.length = data.length;
                return OK; // it failed a moment ago and works now: take what we read
            } catch (NoSuchFileException e) {
                r.error = file + ": no such file";
                return ABSENT;
            } catch (AccessDeniedException e) {
                r.error = file + ": permission denied";
                return DENIED;
            } catch (FileSystemException e) {
                // EPERM has no type of its own, and the message is strerror in the user's locale. What
                // can be checked: the process's directory is there but its file will not open, as
                // hidepid=noaccess answers.
                r.error = e.getMessage();
                Path dir = Path.of(file).getParent();
                return dir != null && Files.isDirectory(dir) ? DENIED : FAILED;
            } catch (IOException | RuntimeException e) {
                r.error = file + ": " + e;
                return FAILED;
            }
        }
    }

    /**
     * How many blank-separated words follow {@code key} on the line of {@code b[0, len)} that starts
     * with it ({@code NSpid:	1234	1} → 2), or -1 when no line does. Here, not in {@link StatusFile},
     * so that the view of {@code /proc} is read without loading that class.
     */
    static int wordsAfter(byte[] b, int len, String key) {
        int line = 0;
        while (line < len) {
            int end = line;
            while (end < len && b[end] != '\n') {
                end++;
            }
            if (startsWith(b, line, end, key)) {
                int words = 0;
                boolean inWord = false;
                for (int i = line + key.length(); i < end; i++) {
                    boolean blank = b[i] == ' ' || b[i] == '\t';
                    if (!blank && !inWord) {
                        words++;
                    }
                    inWord = !blank;
                }
                return words;
            }
            line = end + 1;
        }
        return -1;
    }

    /**
     * The file name {@code root/PID/exe} links to ({@code readlink(2)}: EACCES for another user's
     * process), or empty when it cannot be read: no executable name, which is no reason to stop a walk.
     */
    String executableName(String root, long pid) {
        try {
            Path exe = Path.of(root, Long.toString(pid), "exe");
            if (opened != null) {
                opened.accept(exe.toString());
            }
            String link = Files.readSymbolicLink(exe).toString();
            if (link.endsWith(DELETED)) { // the program was replaced on disk (a shell upgraded under it)
                link = link.substring(0, link.length() - DELETED.length());
            }
            return fileName(link);
        } catch (Exception e) { // IOException or a runtime one; not named: the verifier would load it with this class
            return "";
        }
    }

    /** What {@code readlink(2)} of {@code /proc/PID/exe} appends when the file was unlinked. */
    private static final String DELETED = " (deleted)";

    /** The file name of {@code argv[0]} in {@code root/PID/cmdline}, or empty when it cannot be read. */
    String argv0Name(String root, long pid) {
        if (read(path(root, pid, "cmdline"), true) == OK) {
            return argv0(buffer, length);
        }
        return "";
    }

    /** The file name of the first word of a NUL-separated command line, without a login shell's {@code -}. */
    static String argv0(byte[] cmdline, int length) {
        int end = 0;
        while (end < length && cmdline[end] != 0) {
            end++;
        }
        String word = new String(cmdline, 0, end, StandardCharsets.UTF_8);
        return fileName(word.startsWith("-") ? word.substring(1) : word);
    }

    /** {@code ProgramNames#fileName}, here so that reading a name loads no ProgramNames. */
    private static String fileName(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** Whether {@code b[from, to)} starts with {@code prefix} (ASCII). */
    static boolean startsWith(byte[] b, int from, int to, String prefix) {
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

    byte[] buffer() {
        return buffer;
    }

    int length() {
        return length;
    }

    /** What the last read held, as text. */
    String text() {
        return new String(buffer, 0, length, StandardCharsets.ISO_8859_1);
    }

    /** Why the last read failed. */
    String error() {
        return error;
    }

    // The stat line located last.


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
     * Finds the fields of a stat line in {@code b[0, len)} (this reader's {@link #buffer()}, or
     * another): null when it has what proclive reads (a
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

    /** Whether the state of the located line is one {@link #state} reads as LIVE, asked without loading ProcessState. */
    boolean live() {
        byte s = b[state];
        return s != 'Z' && s != 'X' && s != 'x';
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

    /** The parent pid of the located line (a number: {@link #locate} checked it). */
    long parentPid() {
        return parseDigits(b, ppid, ppidEnd);
    }

    /** The comm of the located line, as {@link #info()} decodes it. */
    String comm() {
        return new String(b, open + 1, close - open - 1, StandardCharsets.UTF_8);
    }

    /** The starttime field of the located line as written there, as {@link #info()} keeps it. */
    String startText() {
        return new String(b, start, startEnd - start, StandardCharsets.ISO_8859_1);
    }

    /** Whether the starttime field of the located line is exactly {@code text}, compared in place. */
    boolean startIs(String text) {
        return asciiEquals(start, startEnd, text);
    }

    /** The located line, decoded. */
    ProcessInfo info() {
        return new ProcessInfo(pid(), parentPid(), comm(), startText(), state(b[state]));
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
