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

    /** How a read ended. */
    enum Status {
        OK,
        /** ENOENT: no such file. */
        ABSENT,
        /**
         * EACCES, or a file that will not open in a directory that is there: EPERM, which
         * {@code hidepid=noaccess} answers and NIO reports as a plain FileSystemException.
         */
        DENIED,
        /** Anything else. */
        FAILED
    }

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
     * @return how it ended; see {@link #error()} when not {@link Status#OK}
     */
    Status read(String path, boolean whole) {
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
            return Status.OK;
        } catch (IOException e) {
            return classify(path);
        }
    }

    /** Reads the file again through NIO, whose exceptions say which errno it was. */
    private Status classify(String file) {
        try {
            byte[] data = Files.readAllBytes(Path.of(file));
            if (data.length > buffer.length) {
                buffer = new byte[data.length];
            }
            System.arraycopy(data, 0, buffer, 0, data.length);
            length = data.length;
            return Status.OK; // it failed a moment ago and works now: take what we read
        } catch (NoSuchFileException e) {
            error = file + ": no such file";
            return Status.ABSENT;
        } catch (AccessDeniedException e) {
            error = file + ": permission denied";
            return Status.DENIED;
        } catch (FileSystemException e) {
            // EPERM has no type of its own, and the message is strerror in the user's locale. What
            // can be checked: the process's directory is there but its file will not open, as
            // hidepid=noaccess answers.
            error = e.getMessage();
            Path dir = Path.of(file).getParent();
            return dir != null && Files.isDirectory(dir) ? Status.DENIED : Status.FAILED;
        } catch (IOException | RuntimeException e) {
            error = file + ": " + e;
            return Status.FAILED;
        }
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
