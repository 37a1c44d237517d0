package dev.proclive.linux;

import dev.proclive.Reason;
import dev.proclive.spi.ProcessLookup;
import java.util.Optional;

/**
 * What this process's {@code /proc} looks like, read once: whether its numbers are this process's
 * at all, how its start times are shifted, the boot id, the PID namespace, and beside them the
 * machine id (those three as {@link ProcMount} read them). Whether it hides other users' processes
 * is read apart, only when an entry is missing ({@code LinuxProcessIntrospector.Missing}).
 * None of it can change while the process lives (a process cannot leave its PID, user or time
 * namespace), so one value serves every later lookup.
 *
 * @param distrust  why {@code /proc} cannot be trusted for anything, or empty when it can
 * @param shift     this process's time-namespace boottime offset, or null where there is none to
 *                  take off (the initial time namespace, the common case: a measured hot path, where
 *                  a hook's cold JVM then loads no {@link BootOffset}); ask {@link #fingerprint},
 *                  {@link #sameStart}, {@link #shifted}
 * @param bootId    {@code /proc/sys/kernel/random/boot_id}, or empty when unreadable (then no boot
 *                  is recorded: never {@code btime}, which moves when the clock is stepped)
 * @param pidNamespace the inode {@code /proc/self/ns/pid} names, or empty
 * @param machineId {@code /etc/machine-id}, else {@code /var/lib/dbus/machine-id}, when it holds a
 *                  valid id ({@link ProcMount#parseMachineId}), or empty
 * @param settled   false when a read failed in a way that may pass: read the view again next time
 * @param initialPidNamespace whether {@code pidNamespace} is the initial one's, or unreadable (then
 *                  counted as initial): decided once, since every check asks
 */
record ProcView(Optional<ProcessLookup.Unknown> distrust, BootOffset shift,
                Optional<String> bootId, Optional<String> pidNamespace, Optional<String> machineId,
                boolean settled, boolean initialPidNamespace) {

    ProcView(Optional<ProcessLookup.Unknown> distrust, BootOffset shift, Optional<String> bootId,
             Optional<String> pidNamespace, Optional<String> machineId, boolean settled) {
        this(distrust, shift == null || shift.none() ? null : shift, bootId, pidNamespace, machineId, settled,
                ProcMount.initialPidNamespace(pidNamespace.orElse("")));
    }

    /**
     * @param procRoot where procfs is mounted
     * @param boot     its boot id, {@code pidns} and {@code machine} as {@link ProcMount} read them
     */
    static ProcView read(String procRoot, ProcReader r, Optional<String> boot, Optional<String> pidns,
                         Optional<String> machine) {
        String statusPath = procRoot + "/self/status";
        int status = r.read(statusPath, true);
        if (status == ProcReader.ABSENT) {
            return untrusted(Reason.OTHER_PID_NAMESPACE, procRoot + "/self does not resolve: " + procRoot
                    + " belongs to another PID namespace or is not procfs", boot, pidns, machine, true);
        }
        if (status != ProcReader.OK) {
            return untrusted(Reason.IO_ERROR, statusPath + ": " + r.error(), boot, pidns, machine, false);
        }
        int nspid = ProcReader.wordsAfter(r.buffer(), r.length(), StatusFile.NSPID); // as StatusFile reads it
        if (nspid > 1) {
            return untrusted(Reason.OTHER_PID_NAMESPACE, procRoot
                    + " was mounted for another PID namespace: its pids are not this process's (NSpid lists "
                    + nspid + " ids)", boot, pidns, machine, true);
        }

        String offsetsPath = procRoot + "/self/timens_offsets";
        BootOffset shift = null; // none: a kernel without time namespaces (before 5.6), or offsets of zero
        int offsets = r.read(offsetsPath, true);
        if (offsets != ProcReader.OK && offsets != ProcReader.ABSENT) {
            return untrusted(Reason.IO_ERROR, offsetsPath + ": " + r.error(), boot, pidns, machine, false);
        }
        if (offsets == ProcReader.OK && !ProcMount.zeroBoottime(r.text())) {
            Optional<BootOffset> parsed = BootOffset.parse(r.text());
            if (parsed.isEmpty()) {
                return untrusted(Reason.IO_ERROR, "malformed " + offsetsPath, boot, pidns, machine, true);
            }
            shift = parsed.get();
        }

        return new ProcView(Optional.empty(), shift, boot, pidns, machine, true);
    }

    /** Whether start times are shown shifted to this process: a time namespace with a boottime offset. */
    boolean shifted() {
        return shift != null;
    }

    /** The fingerprint of a start time shown as {@code shownTicks} to this process. */
    String fingerprint(long shownTicks) {
        return shift == null ? Long.toString(shownTicks) : shift.fingerprint(shownTicks);
    }

    /**
     * Whether a recorded fingerprint names the process whose fingerprint reads {@code current} here: the
     * same, the tick after ({@link BootOffset#recordedATickLate}, what any recorder in a namespace whose
     * offset has a fraction of a tick may write), or, in such a namespace, the tick before
     * ({@link BootOffset#sameStart}).
     */
    boolean sameStart(String recorded, String current) {
        return recorded.equals(current) || BootOffset.recordedATickLate(recorded, current)
                || shift != null && shift.sameStart(recorded, current);
    }

    private static ProcView untrusted(Reason reason, String detail, Optional<String> boot, Optional<String> pidns,
                                      Optional<String> machine, boolean settled) {
        return new ProcView(Optional.of(new ProcessLookup.Unknown(reason, detail)), null,
                boot, pidns, machine, settled);
    }

}
