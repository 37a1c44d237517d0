package dev.proclive.spi;

import java.util.Objects;

/**
 * One process as read from the kernel.
 *
 * @param pid       the process id
 * @param parentPid its parent's id, or 0 when it has none or the platform cannot tell
 * @param name      its short name (Linux {@code comm}, macOS {@code p_comm}, Windows the executable)
 * @param start     its start fingerprint, in the exact text {@link dev.proclive.Identity#start()}
 *                  records
 * @param state     whether it can still run
 */
public record ProcessInfo(long pid, long parentPid, String name, String start, ProcessState state) {

    /** @throws NullPointerException if a string or the state is null */
    public ProcessInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(start, "start");
        Objects.requireNonNull(state, "state");
    }
}
