package dev.proclive.spi.internal;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessIntrospector;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * What a scan of this host's processes for an environment variable found: the processes whose
 * initial environment holds it with the value asked for, and whether that list is a proof. A scan
 * that could not read a process that may hold it (another user's process without privilege, a
 * {@code /proc} with {@code hidepid}, a platform that cannot read environments), or that found it
 * in a process of another user, is incomplete: an empty list then proves nothing.
 *
 * <p>A pass over a process list is not a snapshot: a process listed and gone before its
 * environment was read may have forked a carrier first. Such a pass is incomplete with
 * {@code passAgain}: another pass lists what it forked.
 *
 * @param carriers  the processes found, each as {@link ProcessIntrospector#lookupProcess} reads it
 * @param complete  whether every candidate was read
 * @param detail    why it is incomplete, for a person; empty when complete
 * @param passAgain whether another pass may find what this one could not: processes ended during
 *                  it (the only reason it is incomplete), or processes that may be the scanned
 *                  user's ended during it while other users' processes leave it partial for good (a
 *                  re-forking carrier's chain ends a generation under every pass)
 */
public record EnvironmentScan(List<ProcessInfo> carriers, boolean complete, String detail, boolean passAgain) {

    /** @throws NullPointerException if an argument is null */
    public EnvironmentScan {
        carriers = List.copyOf(carriers);
        Objects.requireNonNull(detail, "detail");
        if (complete && passAgain) {
            throw new IllegalArgumentException("a complete scan needs no other pass");
        }
    }

    /** A complete scan, or one that is incomplete for good ({@code passAgain} false). */
    public EnvironmentScan(List<ProcessInfo> carriers, boolean complete, String detail) {
        this(carriers, complete, detail, false);
    }

    /**
     * One pass's answer from what it met: complete when it met nothing it could not read and no
     * process that ended under it; partial for good ({@code unread}: another user's process, say),
     * to be passed again only if a process that may be the scanned user's ended ({@code
     * usersEnded}); else passed again when any process ended ({@code ended}).
     *
     * @param unread     why some process could not be read, or empty
     * @param ended      which process ended under the pass, or empty
     * @param usersEnded which process that may be the scanned user's (its user known to be it, or
     *                   not known) ended under the pass, or empty
     */
    public static EnvironmentScan ofPass(List<ProcessInfo> carriers, String unread, String ended, String usersEnded) {
        if (!unread.isEmpty()) {
            return usersEnded.isEmpty() ? new EnvironmentScan(carriers, false, unread)
                    : new EnvironmentScan(carriers, false, unread + "; " + usersEnded, true);
        }
        if (!ended.isEmpty()) {
            return new EnvironmentScan(carriers, false, ended, true);
        }
        return new EnvironmentScan(carriers, true, "");
    }

    /** A scan that read nothing: {@code why} says why. */
    public static EnvironmentScan incomplete(String why) {
        return new EnvironmentScan(List.of(), false, why);
    }

    /** How many passes {@link #asProof} makes while processes keep ending under it. */
    public static final int PASSES = 4;

    /**
     * A scan as a proof, from one platform's passes: passes until one meets no process that ended
     * since the pass before, or one is incomplete for good, or {@value #PASSES} passes kept meeting
     * such processes (then incomplete, with {@link #passAgain()}). A process that ended during pass N
     * may have forked a carrier after N's listing; pass N+1 lists whatever it forked.
     *
     * @param pass one pass over the process list, given the zombies ({@code pid:start}) met in the
     *             passes before, to which it adds its own: a zombie seen again proves nothing new
     */
    public static EnvironmentScan asProof(Function<Set<String>, EnvironmentScan> pass) {
        Set<String> zombies = new HashSet<>();
        EnvironmentScan last = null;
        for (int i = 0; i < PASSES; i++) {
            last = pass.apply(zombies);
            if (!last.passAgain()) {
                return last;
            }
        }
        return new EnvironmentScan(last.carriers(), false, last.detail() + ", in each of " + PASSES + " passes", true);
    }
}
