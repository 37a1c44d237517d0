package dev.proclive.spi;

import java.util.List;
import java.util.Objects;

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
 * @param passAgain whether it is incomplete only because processes ended during the pass, so that
 *                  another pass may complete
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

    /** A scan that read nothing: {@code why} says why. */
    public static EnvironmentScan incomplete(String why) {
        return new EnvironmentScan(List.of(), false, why);
    }
}
