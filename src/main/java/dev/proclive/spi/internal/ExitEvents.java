package dev.proclive.spi.internal;

/**
 * The seam through which an operating system tells that a process has exited, for the exit watch
 * ({@link dev.proclive.ProcLive#onExit}): Linux {@code pidfd_open(2)} with {@code epoll}, macOS a
 * {@code kqueue} with {@code EVFILT_PROC}/{@code NOTE_EXIT}. One instance serves one watching
 * thread; {@link #watch}, {@link #unwatch} and {@link #wake} may be called from any thread.
 *
 * <p>An exit event only says that <em>something</em> happened to the process the handle pins; the
 * watch judges it again with a fresh verdict, so an implementation may report early or twice, but
 * must never miss an exit of a process it is watching.
 */
public interface ExitEvents extends AutoCloseable {

    /** What {@link #watch} did. */
    sealed interface Registration {
        /** The process is watched; its exit will report {@code handle}. */
        record Watching(long handle) implements Registration {
        }

        /** No process has that pid now: it is gone. */
        record Gone() implements Registration {
        }

        /** The pid cannot be watched this way (refused, out of descriptors, not supported): poll it. */
        record Unavailable(String why) implements Registration {
        }
    }

    /**
     * Starts watching the process that has {@code pid} now. Once this returns {@link
     * Registration.Watching}, the handle refers to that process and no other, even if the pid is
     * reused later; the caller checks the identity again after this call to be sure it is the one
     * it meant.
     */
    Registration watch(long pid);

    /** Stops watching {@code handle} and frees what it holds. Unknown or already freed handles are ignored. */
    void unwatch(long handle);

    /**
     * Waits until a watched process exits, {@link #wake()} is called, or {@code timeoutMillis}
     * pass ({@code -1}: no limit), and puts the handles that are ready into {@code ready}.
     *
     * @return how many handles it put there (0 on a wake or a timeout)
     * @throws IllegalStateException if waiting itself failed; the caller stops using this instance
     */
    int await(long timeoutMillis, long[] ready);

    /** Makes a current or the next {@link #await} return at once. */
    void wake();

    /**
     * The wait status ({@code waitpid(2)}'s) of the process {@code handle} pins, once it has ended
     * and its parent has reaped it, where the kernel tells it for any process (Linux 6.15 and later:
     * {@code PIDFD_GET_INFO} with {@code PIDFD_INFO_EXIT}); empty before the reap, for an unknown
     * handle, or where it cannot be told.
     */
    default java.util.OptionalInt exitStatus(long handle) {
        return java.util.OptionalInt.empty();
    }

    /** Whether {@link #exitStatus} can answer here at all: the watch then waits a moment for a zombie's reap. */
    default boolean tellsExitStatus() {
        return false;
    }

    /**
     * Stops reporting {@code handle} from {@link #await} while keeping the process pinned, until
     * {@link #unwatch}: for a process that ended and whose status is awaited.
     */
    default void quiet(long handle) {
    }

    /** Frees everything this instance holds. */
    @Override
    void close();
}
