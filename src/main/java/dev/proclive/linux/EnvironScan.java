package dev.proclive.linux;

import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.internal.KernelIntrospector;
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
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One pass over {@code /proc} for the processes whose initial environment ({@code /proc/PID/environ})
 * holds a variable with a value asked for. Complete only when every process that could carry it was
 * read: a procfs that hides pids, one process whose environment cannot be read (another user's,
 * without privilege) or a carrier of another user makes it incomplete; a listed process that ended
 * before its environment was read (it may have forked a carrier first) makes a pass inconclusive,
 * and the scan passes again ({@link #scan}). Processes whose start is below the floor given are skipped
 * after one read of their {@code stat}, so a scan on a busy host reads few environments.
 */
final class EnvironScan {

    /** The largest environment read; one larger makes the scan incomplete rather than guessed at. */
    static final int MAX_ENVIRON_BYTES = 8 << 20;

    /** How often {@link #one} reads an environment that reads empty before it says it cannot tell. */
    private static final int EMPTY_READS = 5;

    private EnvironScan() {
    }

    /**
     * What one process's environment says, or why it could not be read: {@code DENIED} by its
     * permissions (EACCES), {@code UNREADABLE} for any other failure (ESRCH, once an exiting
     * process's memory is released; EIO). Told apart by the JDK's exception type, never by its
     * message, which is strerror in the user's locale.
     */
    private enum Read { HOLDS, LACKS, EMPTY, VANISHED, DENIED, UNREADABLE }


    /** A scan as a proof ({@link EnvironmentScan#asProof}): one pass after another while processes end under it. */
    static EnvironmentScan scan(KernelIntrospector proc, String procRoot, boolean hidesPids, String variable,
                                Predicate<String> value, long uid, Optional<String> startedAfter) {
        return EnvironmentScan.asProof(zombies -> pass(proc, procRoot, hidesPids, variable, value, uid, startedAfter,
                zombies));
    }

    /** One pass; {@code zombies}: the zombies (pid:start) met in passes before, and this one's added. */
    private static EnvironmentScan pass(KernelIntrospector proc, String procRoot, boolean hidesPids, String variable,
                                        Predicate<String> value, long uid, Optional<String> startedAfter,
                                        Set<String> zombies) {
        if (hidesPids) {
            return EnvironmentScan.incomplete(procRoot + " hides other users' processes (hidepid) from this one");
        }
        long floor = Long.MIN_VALUE;
        if (startedAfter.isPresent()) {
            OptionalLong ticks = ticks(startedAfter.get());
            if (ticks.isEmpty()) {
                return EnvironmentScan.incomplete("the floor " + startedAfter.get() + " is not a count of clock ticks");
            }
            floor = ticks.getAsLong();
        }
        byte[] prefix = (variable + "=").getBytes(StandardCharsets.UTF_8);
        List<ProcessInfo> carriers = new ArrayList<>();
        Tally unread = new Tally("could not be read");
        Tally vanished = new Tally("ended while they were read");
        Tally usersVanished = new Tally("that may have been this user's ended while they were read"); // may have forked a carrier
        String[] error = new String[1];
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(Path.of(procRoot), EnvironScan::isPid)) {
            for (Path dir : pids) {
                long pid = Long.parseLong(dir.getFileName().toString());
                ProcessLookup lookup = proc.lookup(pid);
                if (lookup instanceof ProcessLookup.Gone) {
                    vanished.add("pid " + pid + " ended before it could be read");
                    usersVanished.add("pid " + pid + " ended before it could be read"); // whose it was cannot be told
                    continue;
                }
                if (!(lookup instanceof ProcessLookup.Found found)) {
                    unread.add("pid " + pid + ": " + ((ProcessLookup.Unknown) lookup).detail());
                    continue;
                }
                ProcessInfo info = found.info();
                if (startTicks(info.start()) < floor) {
                    continue; // started before the reservation
                }
                if (info.state() == ProcessState.ZOMBIE) {
                    if (zombies.add(pid + ":" + info.start())) {
                        String ended = "pid " + pid + " ended during the pass"; // what it forked is listed next pass
                        vanished.add(ended);
                        if (mayBeUsers(proc, pid, uid)) {
                            usersVanished.add(ended);
                        }
                    }
                    continue;
                }
                Read read = read(dir.resolve("environ"), prefix, value, error);
                if (read != Read.UNREADABLE && read != Read.DENIED && !sameProcess(proc, info)) {
                    read = Read.VANISHED; // the environment read may be a later process's under the same pid
                }
                for (int again = 1; read == Read.EMPTY && again < EMPTY_READS && !exiting(dir.resolve("stat")); again++) {
                    // one in the middle of an execve reads empty for a moment too (see one()): read it again
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                    read = read(dir.resolve("environ"), prefix, value, error);
                    if (read != Read.UNREADABLE && read != Read.DENIED && !sameProcess(proc, info)) {
                        read = Read.VANISHED;
                    }
                }
                if (read == Read.EMPTY) {
                    // An exiting process's memory is gone before it is a zombie: its environment reads
                    // empty, and what it forked after the listing is not listed. Only a live one that
                    // still reads empty when read again (started with none: env -i) lacks it.
                    read = exiting(dir.resolve("stat")) ? Read.VANISHED : Read.LACKS;
                }
                switch (read) {
                    case VANISHED:
                        String ended = "pid " + pid + " ended before its environment could be read";
                        vanished.add(ended);
                        if (mayBeUsers(proc, pid, uid)) {
                            usersVanished.add(ended);
                        }
                        break;
                    case DENIED:
                    case UNREADABLE:
                        if (proc.lookup(pid) instanceof ProcessLookup.Gone) {
                            vanished.add("pid " + pid + " ended before its environment could be read");
                            usersVanished.add("pid " + pid + " ended before its environment could be read");
                        } else if (exiting(dir.resolve("stat"))) {
                            // its stat says it is ending: its memory was released as it exited, after the
                            // listing (ESRCH as root; EACCES for another, as the kernel refuses an exiting
                            // process's memory to anyone who may not trace it): it runs nothing any more,
                            // and another pass lists what it forked
                            String released = "pid " + pid + " ended before its environment could be read";
                            vanished.add(released);
                            if (mayBeUsers(proc, pid, uid)) {
                                usersVanished.add(released);
                            }
                        } else if (!located(dir.resolve("stat")).map(StatLine::kernelThread).orElse(false)) {
                            unread.add("pid " + pid + ": " + error[0]);
                        } // a kernel thread (its environ reads ESRCH) has no environment: never a carrier
                        break;
                    case HOLDS:
                        OptionalLong owner = proc.userId(pid);
                        if (owner.isPresent() && owner.getAsLong() == uid) {
                            carriers.add(info);
                        } else {
                            unread.add("pid " + pid + " carries it but runs as " + (owner.isPresent()
                                    ? "uid " + owner.getAsLong() + ", not uid " + uid : "a user that cannot be read"));
                        }
                        break;
                    default:
                        break;
                }
            }
        } catch (IOException | DirectoryIteratorException e) {
            return EnvironmentScan.incomplete("cannot list " + procRoot + ": " + e);
        }
        return EnvironmentScan.ofPass(carriers, unread.toString(), vanished.toString(), usersVanished.toString());
    }

    /** How many processes of one kind a pass met, said with the first one: empty when none. */
    private static final class Tally {
        private final String what;
        private String first = "";
        private int count;

        Tally(String what) {
            this.what = what;
        }

        void add(String one) {
            if (count++ == 0) {
                first = one;
            }
        }

        @Override
        public String toString() {
            return count <= 1 ? first : count + " processes " + what + " (" + first + ", …)";
        }
    }

    /** Whether process {@code pid}, which ended, may have been {@code uid}'s: it was, or it cannot be told. */
    private static boolean mayBeUsers(KernelIntrospector proc, long pid, long uid) {
        OptionalLong owner = proc.userId(pid);
        return owner.isEmpty() || owner.getAsLong() == uid;
    }

    /**
     * Whether the process whose {@code stat} this is was ending ({@link StatLine#ending}) or is
     * gone, when read: true also when the line cannot be read or located (nothing proves it lives).
     */
    static boolean exiting(Path stat) {
        return located(stat).map(StatLine::ending).orElse(true);
    }

    /** The line of {@code stat}, located; empty when it cannot be read or located. */
    static Optional<StatLine> located(Path stat) {
        byte[] line;
        try {
            line = Files.readAllBytes(stat);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        StatLine located = new StatLine();
        return located.locate(line, line.length) == null ? Optional.of(located) : Optional.empty();
    }

    /**
     * Process {@code pid}'s environment alone: whether it holds {@code variable} with a value
     * {@code value} accepts. An environment that reads empty proves nothing: a process in the middle
     * of an {@code execve} reads so (the kernel sets the new image's environment only after it closed
     * the descriptors marked close-on-exec, which is when the JDK's {@code start()} returns), as an
     * exiting one does: read then, a process just started with the token would pass for one that
     * never carried it. It is read again a few times, a millisecond apart (an exec is over in far
     * less, on a machine that lets it run).
     */
    static EnvironmentScan one(KernelIntrospector proc, String procRoot, long pid, String variable,
                               Predicate<String> value) {
        ProcessLookup lookup = proc.lookupProcess(pid);
        if (!(lookup instanceof ProcessLookup.Found found)) {
            return EnvironmentScan.incomplete("pid " + pid + " cannot be read: " + lookup);
        }
        String[] error = new String[1];
        Path environ = Path.of(procRoot, Long.toString(pid), "environ");
        byte[] prefix = (variable + "=").getBytes(StandardCharsets.UTF_8);
        Read read = read(environ, prefix, value, error);
        for (int again = 1; read == Read.EMPTY && again < EMPTY_READS; again++) {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            read = read(environ, prefix, value, error);
        }
        if (read == Read.EMPTY) {
            return EnvironmentScan.incomplete("the environment of pid " + pid + " reads empty (it is starting a program,"
                    + " or ending, or has none)");
        }
        if (read == Read.UNREADABLE || read == Read.DENIED || read == Read.VANISHED || !sameProcess(proc, found.info())) {
            return EnvironmentScan.incomplete("the environment of pid " + pid + " cannot be read"
                    + (error[0] == null ? "" : ": " + error[0]));
        }
        return new EnvironmentScan(read == Read.HOLDS ? List.of(found.info()) : List.of(), true, "");
    }

    /** Whether {@code pid} still runs the process {@code info} read (not a later one under its pid). */
    private static boolean sameProcess(KernelIntrospector proc, ProcessInfo info) {
        return proc.lookup(info.pid()) instanceof ProcessLookup.Found again && again.info().start().equals(info.start());
    }

    private static Read read(Path environ, byte[] prefix, Predicate<String> value, String[] error) {
        try {
            byte[] bytes = readEnviron(environ);
            if (bytes.length == 0) {
                return Read.EMPTY; // no environment, or one already released by an exiting process
            }
            return holds(bytes, prefix, value) ? Read.HOLDS : Read.LACKS;
        } catch (NoSuchFileException e) {
            return Read.VANISHED;
        } catch (AccessDeniedException e) {
            error[0] = "its environment is not readable by this user";
            return Read.DENIED;
        } catch (IOException e) {
            error[0] = e.toString();
            return Read.UNREADABLE;
        }
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

    /** A floor as a count of clock ticks: decimal digits only, or empty. */
    static OptionalLong ticks(String floor) {
        if (floor.isEmpty() || floor.length() > 18) {
            return OptionalLong.empty();
        }
        for (int i = 0; i < floor.length(); i++) {
            if (floor.charAt(i) < '0' || floor.charAt(i) > '9') {
                return OptionalLong.empty();
            }
        }
        return OptionalLong.of(Long.parseLong(floor));
    }

    /** A process's start as a number of ticks; one that is not a number sorts last, so it is read. */
    private static long startTicks(String start) {
        return ticks(start).orElse(Long.MAX_VALUE);
    }

    private static byte[] readEnviron(Path environ) throws IOException {
        try (InputStream in = Files.newInputStream(environ)) {
            byte[] bytes = in.readNBytes(MAX_ENVIRON_BYTES + 1);
            if (bytes.length > MAX_ENVIRON_BYTES) {
                throw new IOException("its environment holds more than " + MAX_ENVIRON_BYTES + " bytes");
            }
            return bytes;
        }
    }

    /**
     * Whether the NUL-separated {@code environ} holds an entry that starts with {@code prefix}
     * ({@code NAME=}) and whose value {@code value} accepts.
     */
    static boolean holds(byte[] environ, byte[] prefix, Predicate<String> value) {
        int start = 0;
        while (start < environ.length) {
            int end = start;
            while (end < environ.length && environ[end] != 0) {
                end++;
            }
            if (end - start >= prefix.length && Arrays.equals(environ, start, start + prefix.length, prefix, 0, prefix.length)
                    && value.test(new String(environ, start + prefix.length, end - start - prefix.length,
                            StandardCharsets.UTF_8))) {
                return true;
            }
            start = end + 1;
        }
        return false;
    }
}
