package dev.proclive.linux;

import dev.proclive.spi.ProcessInfo;
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
 * One thread's reader of small {@code /proc} files into a reused buffer. The happy path is a
 * plain {@link FileInputStream} (cheapest on first use); only after it failed does NIO read the
 * file again, because {@code java.io} reports ENOENT, EACCES and EPERM alike while NIO tells them
 * apart. Not thread-safe: one per thread.
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

    private byte[] buffer = new byte[2048];
    private int length;
    private String error = "";
    private final StringBuilder path = new StringBuilder(64);
    private long lastPid;
    private String lastLeaf;
    private String lastPath;

    /** The stat line last read, located by its reader. */
    final StatLine line = new StatLine();

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
        if (opened != null) {
            opened.accept(path);
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
            return OK;
        } catch (Exception e) { // IOException, not named: the verifier would load it with this class
            return Errno.classify(this, path);
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
                if (data.length > r.buffer.length) {
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
}
