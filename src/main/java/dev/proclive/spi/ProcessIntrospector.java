package dev.proclive.spi;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The seam between proclive's verdict rules and one operating system: reads a process, the boot
 * id, the host name and the PID namespace. {@link dev.proclive.ProcLive} uses the implementation
 * for the running OS; tests and other platforms plug their own into
 * {@link dev.proclive.LivenessChecker#of(ProcessIntrospector)} and
 * {@link dev.proclive.OwnerResolver#introspector(ProcessIntrospector)}.
 *
 * <p>Implementations must be thread-safe and must not throw for any {@code long} pid: every
 * failure is a {@link ProcessLookup.Unknown} with a reason, and only proof of absence is a
 * {@link ProcessLookup.Gone}. Zero, negative and huge pids are simply not found.
 */
public interface ProcessIntrospector {

    /**
     * Reads the task with this id, for a verdict or an ancestor walk. Where thread ids share the
     * PID space (Linux) this may read a thread: an identity never records one, and a thread that
     * later took the number started at another time.
     */
    ProcessLookup lookup(long pid);

    /**
     * Like {@link #lookup(long)}, but only a process counts: a thread id reads as
     * {@link ProcessLookup.Gone}. Used before recording an identity. The default is
     * {@link #lookup(long)}, right for platforms whose thread ids are not process ids.
     */
    default ProcessLookup lookupProcess(long pid) {
        return lookup(pid);
    }

    /** Reads the calling process itself, without going through its pid. */
    ProcessLookup self();

    /**
     * Whether a recorded start fingerprint names the process whose fingerprint reads
     * {@code current} now. The default is equality; a platform whose view of start times is
     * coarser than the fingerprint (Linux in a time namespace whose offset is not a whole clock
     * tick) may also accept the one neighbour it cannot rule out.
     *
     * @param recorded the fingerprint an identity holds, never empty
     * @param current  {@link ProcessInfo#start()} as this introspector read it
     */
    default boolean sameStart(String recorded, String current) {
        return recorded.equals(current);
    }

    /**
     * Whether {@code recorded} is a start fingerprint as this platform writes them, spelled exactly
     * so (Linux: clock ticks, decimal digits without a sign or a leading zero; macOS:
     * {@code seconds.microseconds}, the seconds likewise): one that is not ({@code 0285663} for
     * {@code 285663}) cannot be compared, so it proves nothing — never that the pid was reused. The
     * default accepts any.
     */
    default boolean isFingerprint(String recorded) {
        return true;
    }

    /**
     * Whether {@code recorded} is a boot id as this platform writes them, spelled exactly so (Linux:
     * {@code /proc/sys/kernel/random/boot_id}, 36 characters of lowercase hex digits and dashes): one
     * that is not (upper-cased, with a space) is no other boot's, so it proves nothing — never a
     * reboot. The default accepts any.
     */
    default boolean isBootId(String recorded) {
        return true;
    }

    /**
     * The id of the current boot, or empty when the platform records none or it cannot be read.
     * It is compared for equality only.
     */
    Optional<String> bootId();

    /**
     * This host's name as Go's {@code os.Hostname()} gives it, or empty when it cannot be read.
     * Read on every call: {@link dev.proclive.LivenessChecker} keeps it for about a second.
     */
    Optional<String> hostName();

    /**
     * This machine's id, or empty when the platform has none or it cannot be read: Linux
     * {@code /etc/machine-id} (else {@code /var/lib/dbus/machine-id}), 32 lowercase hex digits;
     * macOS the hardware UUID. It tells apart machines that share a host name, so an identity that
     * records one is judged only where it reads the same. Compared for equality only; an
     * implementation reads it once. The default has none.
     */
    default Optional<String> machineId() {
        return Optional.empty();
    }

    /** The calling process's PID namespace, or empty when the platform has none or it cannot be read. */
    Optional<String> pidNamespace();

    /**
     * Whether the calling process is in the platform's initial PID namespace, where pid 1 is init
     * and never an owner, and where every identity without a namespace was recorded. The default:
     * true where the platform has no PID namespaces (or cannot read this one).
     */
    default boolean inInitialPidNamespace() {
        return pidNamespace().isEmpty();
    }

    /**
     * Whether this introspector can look at processes at all. The default asks {@link #self()}: a
     * platform that cannot answers {@link dev.proclive.Reason#UNSUPPORTED_PLATFORM} there.
     */
    default boolean supported() {
        return !(self() instanceof ProcessLookup.Unknown unknown
                && unknown.reason() == dev.proclive.Reason.UNSUPPORTED_PLATFORM);
    }

    /**
     * Whether a process called {@code processName} (as {@link ProcessInfo#name()} reports it) is
     * the program a caller named {@code name}. The default is equality; a platform that keeps only
     * the first bytes of a name answers with {@link #matchesTruncated}.
     */
    default boolean nameMatches(String processName, String name) {
        return processName.equals(name);
    }

    /**
     * For platforms that keep only {@code limitBytes} bytes of a name (Linux 15, macOS 16): the
     * same name, or, for a name longer than that, its truncation to that many UTF-8 bytes.
     */
    static boolean matchesTruncated(String processName, String name, int limitBytes) {
        if (processName.equals(name)) {
            return true;
        }
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        return bytes.length > limitBytes
                && processName.equals(new String(bytes, 0, limitBytes, StandardCharsets.UTF_8));
    }
}
