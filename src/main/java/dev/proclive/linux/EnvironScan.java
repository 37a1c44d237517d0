package dev.proclive.linux;

import dev.proclive.spi.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A scan of {@code /proc} for the processes whose initial environment ({@code /proc/PID/environ})
 * holds an exact entry. Complete only when every process that could carry it was read: a procfs
 * that hides pids, or one process whose environment cannot be read (another user's, without
 * privilege), makes it incomplete. Processes whose start is below the floor given are skipped
 * after one read of their {@code stat}, so a scan on a busy host reads few environments.
 */
final class EnvironScan {

    /** The largest environment read; one larger makes the scan incomplete rather than guessed at. */
    static final int MAX_ENVIRON_BYTES = 8 << 20;

    private EnvironScan() {
    }

    static EnvironmentScan scan(LinuxProcessIntrospector proc, String procRoot, boolean hidesPids, String entry,
                                Optional<String> startedAfter) {
        if (hidesPids) {
            return EnvironmentScan.incomplete(procRoot + " hides other users' processes (hidepid) from this one");
        }
        long floor = startedAfter.map(EnvironScan::ticks).orElse(Long.MIN_VALUE);
        byte[] wanted = entry.getBytes(StandardCharsets.UTF_8);
        List<ProcessInfo> carriers = new ArrayList<>();
        String unread = "";
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(Path.of(procRoot), EnvironScan::isPid)) {
            for (Path dir : pids) {
                long pid = Long.parseLong(dir.getFileName().toString());
                ProcessLookup lookup = proc.lookup(pid);
                if (lookup instanceof ProcessLookup.Gone) {
                    continue;
                }
                if (!(lookup instanceof ProcessLookup.Found found)) {
                    unread = "pid " + pid + ": " + ((ProcessLookup.Unknown) lookup).detail();
                    continue;
                }
                ProcessInfo info = found.info();
                if (info.state() == ProcessState.ZOMBIE || ticks(info.start()) < floor) {
                    continue; // exited, or started before the reservation
                }
                try {
                    if (holds(read(dir.resolve("environ")), wanted)) {
                        carriers.add(info);
                    }
                } catch (NoSuchFileException e) {
                    // exited meanwhile
                } catch (IOException e) {
                    if (!(proc.lookup(pid) instanceof ProcessLookup.Gone)) {
                        unread = "pid " + pid + ": " + (e instanceof AccessDeniedException
                                ? "its environment is not readable by this user" : e.toString());
                    }
                }
            }
        } catch (IOException | DirectoryIteratorException e) {
            return EnvironmentScan.incomplete("cannot list " + procRoot + ": " + e);
        }
        return new EnvironmentScan(carriers, unread.isEmpty(), unread);
    }

    private static boolean isPid(Path p) {
        String name = p.getFileName().toString();
        if (name.isEmpty() || name.length() > 10) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (name.charAt(i) < '0' || name.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** A start fingerprint as a number of ticks; one that is not a number sorts last, so it is read. */
    static long ticks(String start) {
        try {
            return Long.parseLong(start);
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private static byte[] read(Path environ) throws IOException {
        try (InputStream in = Files.newInputStream(environ)) {
            byte[] bytes = in.readNBytes(MAX_ENVIRON_BYTES + 1);
            if (bytes.length > MAX_ENVIRON_BYTES) {
                throw new IOException("its environment holds more than " + MAX_ENVIRON_BYTES + " bytes");
            }
            return bytes;
        }
    }

    /** Whether the NUL-separated {@code environ} holds exactly {@code entry} as one of its entries. */
    static boolean holds(byte[] environ, byte[] entry) {
        int start = 0;
        while (start < environ.length) {
            int end = start;
            while (end < environ.length && environ[end] != 0) {
                end++;
            }
            if (end - start == entry.length && java.util.Arrays.equals(environ, start, end, entry, 0, entry.length)) {
                return true;
            }
            start = end + 1;
        }
        return false;
    }
}
