package dev.proclive.spi;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * What the kernel can say about the processes a command started, so that "nothing of it is left"
 * is a fact instead of the result of a scan. Two mechanisms, each where it exists:
 * <ul>
 *   <li><b>A subreaper.</b> A process that made itself a child subreaper (Linux
 *       {@code PR_SET_CHILD_SUBREAPER}) gets every descendant of what it starts afterwards whose
 *       parent ends: while it lives, its orphans are exactly the descendants left of a command that
 *       ended. It changes what the whole process reaps: orphans that end are reaped here.</li>
 *   <li><b>A cgroup.</b> Where the cgroup v2 hierarchy is writable (root, or a delegated subtree),
 *       a command started inside a new cgroup cannot leave it, nor can anything it forks: the
 *       cgroup's members are its descendants, for any process that can read the cgroup, also after
 *       the starter died.</li>
 * </ul>
 * Where neither exists ({@link #NONE}: macOS, Windows, an old kernel, an unwritable hierarchy),
 * every method says so and nothing changes. Implementations are thread-safe.
 */
public interface Descendants {

    /**
     * Makes this process a child subreaper, once; whether it is one now. Takes effect for the
     * processes started after it.
     */
    boolean becomeSubreaper();

    /**
     * The live processes that became children of this one because their parent ended (orphans of
     * what it started while a subreaper), oldest first, leaving out those that started before
     * {@code startedAfter} (a start floor as {@link ProcessIntrospector#startFloor()} gives it: they
     * cannot descend from a command started after it); those that ended are reaped. Empty when this
     * cannot be told (not a subreaper, or the children cannot be listed). The list is read
     * atomically: an empty one means none at that moment.
     */
    Optional<List<Long>> orphans(Optional<String> startedAfter);

    /**
     * A new, empty cgroup for a command of lease {@code lease}, below this process's own, where one
     * can be made and this process can move processes into it; its path, as {@link #members} and
     * {@link #startInside} take it. Empty where none can be made.
     */
    Optional<String> newCgroup(String lease);

    /**
     * Runs {@code start} (which starts a process) with this process inside {@code cgroup}, so that
     * the process starts there, and moves this process back before returning.
     *
     * @throws IOException if this process cannot be moved in (nothing was started), or as
     *                     {@code start} throws
     */
    <T> T startInside(String cgroup, Start<T> start) throws IOException;

    /** What {@link #startInside} runs. */
    interface Start<T> {
        T start() throws IOException;
    }

    /**
     * The processes in {@code cgroup} now, read atomically; an empty list also when the cgroup was
     * removed (a cgroup can only be removed once it is empty, and nothing enters a removed one).
     * Empty when it cannot be read or told apart from one this process cannot see (another mount
     * namespace, another machine's path).
     */
    Optional<List<Long>> members(String cgroup);

    /** Removes {@code cgroup} if it is empty; quietly, whatever the outcome. */
    void remove(String cgroup);

    /** Where the kernel tracks nothing. */
    Descendants NONE = new Descendants() {
        @Override
        public boolean becomeSubreaper() {
            return false;
        }

        @Override
        public Optional<List<Long>> orphans(Optional<String> startedAfter) {
            return Optional.empty();
        }

        @Override
        public Optional<String> newCgroup(String lease) {
            return Optional.empty();
        }

        @Override
        public <T> T startInside(String cgroup, Start<T> start) throws IOException {
            throw new IOException("no cgroup can be entered here");
        }

        @Override
        public Optional<List<Long>> members(String cgroup) {
            return Optional.empty();
        }

        @Override
        public void remove(String cgroup) {
        }
    };
}
