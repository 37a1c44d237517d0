package dev.proclive.spi;

import java.util.List;
import java.util.Objects;

/**
 * What a scan of this host's processes for an exact environment entry found: the processes whose
 * initial environment holds it, and whether every process that could hold it was read. A scan that
 * could not read one (another user's process without privilege, a {@code /proc} with
 * {@code hidepid}, a platform that cannot read environments) is incomplete: an empty list then
 * proves nothing.
 *
 * @param carriers the processes found, each as {@link ProcessIntrospector#lookupProcess} reads it
 * @param complete whether every candidate was read
 * @param detail   why it is incomplete, for a person; empty when complete
 */
public record EnvironmentScan(List<ProcessInfo> carriers, boolean complete, String detail) {

    /** @throws NullPointerException if an argument is null */
    public EnvironmentScan {
        carriers = List.copyOf(carriers);
        Objects.requireNonNull(detail, "detail");
    }

    /** A scan that read nothing: {@code why} says why. */
    public static EnvironmentScan incomplete(String why) {
        return new EnvironmentScan(List.of(), false, why);
    }
}
