package dev.proclive.spi.internal;

import dev.proclive.spi.ProcessIntrospector;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the kernel can say about the processes a command started, so that "nothing of it is left"
 * is a fact instead of the result of a scan. Two mechanisms, each where it exists, and neither
 * enough alone:
 * <ul>
 *   <li><b>A subreaper.</b> A process that made itself a child subreaper (Linux
 *       {@code PR_SET_CHILD_SUBREAPER}) gets every descendant of what it starts afterwards whose
 *       parent ends: while it lives, its orphans and their descendants are exactly what is left of a
 *       command that ended, wherever they moved. It changes what the whole process reaps: orphans
 *       that end are reaped here.</li>
 *   <li><b>A cgroup.</b> Where the cgroup v2 hierarchy is writable (root, or a delegated subtree),
 *       a command started inside a new cgroup stays in it, with everything it forks, unless a
 *       process writes itself into another cgroup it may write to: the cgroup proves who is
 *       inside, never who left. It can be read by any process in the same cgroup namespace, also
 *       after the starter died; a path read from another cgroup namespace, or one that now names
 *       another directory, proves nothing.</li>
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
     * cannot descend from a command started after it); a process whose main thread exited while
     * another thread runs is live. Those that ended are reaped. Empty when this cannot be told (not
     * a subreaper, or the children cannot be listed). The list is read atomically: an empty one
     * means none at that moment.
     */
    Optional<List<Long>> orphans(Optional<String> startedAfter);

    /**
     * A new, empty cgroup for a command of lease {@code lease} of the store {@code store} names (a
     * short tag of hex digits, {@code LeaseNames.storeTag}), below this process's own, where one can
     * be made and a process this one starts can move itself into it; its path, as {@link #members}
     * and {@link #enter} take it. Empty where none can be made.
     */
    Optional<String> newCgroup(String lease, String store);

    /**
     * What tells {@code cgroup} apart from any other that has or had its path, for a reader that
     * may be elsewhere: this process's cgroup namespace and the directory's inode, as
     * {@code "NAMESPACE:INODE"}. Empty when it cannot be read.
     */
    Optional<String> cgroupId(String cgroup);

    /**
     * {@code command} as a command that first moves itself into {@code cgroup} and then runs
     * {@code command} in its place, with the same environment, directory and streams: if the move
     * fails nothing of {@code command} runs, and the process exits with status
     * {@value #CANNOT_ENTER}, saying why on its standard error. This process never moves.
     */
    List<String> enter(String cgroup, List<String> command);

    /** The status of a process {@link #enter} made that could not move itself into its cgroup. */
    int CANNOT_ENTER = 125;

    /**
     * The processes in {@code cgroup} now, in it or in any cgroup below it (a process may make one
     * of its own and move there: it never left), read atomically; an empty list only when the
     * kernel says the whole subtree is empty, or when the cgroup was
     * removed (a cgroup can only be removed once it is empty, and nothing enters a removed one).
     * {@code id} is what {@link #cgroupId} said when it was made: read from another cgroup
     * namespace, or where the path now names another directory, nothing is a proof; a missing path
     * is "removed" only in the namespace it was made in. Empty when it proves nothing.
     */
    Optional<List<Long>> members(String cgroup, String id);

    /**
     * Sends {@code signal} to every process in {@code cgroup}'s subtree as {@link #members} reads it
     * (what of a command stayed inside: its whole tree, as a service manager stops one); nothing
     * where the members prove nothing, or nothing can be signalled. A SIGKILL goes through the
     * cgroup's {@code cgroup.kill} where the kernel has one, which also kills what is forked meanwhile.
     */
    default void signal(String cgroup, String id, int signal) {
    }

    /**
     * Removes {@code cgroup} if its subtree is empty, the cgroups below it first (deepest first);
     * quietly, whatever the outcome.
     */
    void remove(String cgroup);

    /**
     * The empty cgroups this library made for the store {@code store} names below this process's
     * own ({@code proclive.LEASE.STORE.*}; another store's are never listed) that were made more
     * than {@code olderThan} before {@code madeNow}, a cgroup just made (ages are told by the
     * kernel's clock, never this process's wall clock): the candidates a sweep removes when no
     * record names them.
     */
    List<String> emptyCgroups(String store, String madeNow, Duration olderThan);

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
        public Optional<String> newCgroup(String lease, String store) {
            return Optional.empty();
        }

        @Override
        public Optional<String> cgroupId(String cgroup) {
            return Optional.empty();
        }

        @Override
        public List<String> enter(String cgroup, List<String> command) {
            throw new UnsupportedOperationException("no cgroup can be entered here");
        }

        @Override
        public Optional<List<Long>> members(String cgroup, String id) {
            return Optional.empty();
        }

        @Override
        public void remove(String cgroup) {
        }

        @Override
        public List<String> emptyCgroups(String store, String madeNow, Duration olderThan) {
            return List.of();
        }
    };
}
