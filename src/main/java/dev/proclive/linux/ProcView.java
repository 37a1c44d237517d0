package dev.proclive.linux;

import dev.proclive.Reason;
import dev.proclive.spi.ProcessLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * What this process's {@code /proc} looks like, read once: whether its numbers are this process's
 * at all, how its start times are shifted, the boot id, the PID namespace, and beside them the
 * machine id. Whether it hides other users' processes is read apart, only when an entry is missing
 * ({@code LinuxProcessIntrospector.Missing}).
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
 *                  valid id ({@link #parseMachineId}), or empty
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
                pidNamespace.isEmpty() || LinuxProcessIntrospector.INITIAL_PID_NAMESPACE.equals(pidNamespace.get()));
    }

    /** Where the machine id is looked for, first to last, below the filesystem root (machine-id(5)). */
    static final String[] MACHINE_ID_PATHS = {"/etc/machine-id", "/var/lib/dbus/machine-id"};

    /**
     * @param procRoot    where procfs is mounted
     * @param machineRoot what {@link #MACHINE_ID_PATHS} are found below ({@code ""} for this system)
     */
    static ProcView read(String procRoot, String machineRoot, ProcReader r) {
        Optional<String> boot = readSmallFile(r, procRoot + "/sys/kernel/random/boot_id");
        Optional<String> pidns = namespace(procRoot, "pid");
        Optional<String> machine = machineId(r, machineRoot);
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
        if (offsets == ProcReader.OK && !zeroBoottime(r.text())) {
            Optional<BootOffset> parsed = BootOffset.parse(r.text());
            if (parsed.isEmpty()) {
                return untrusted(Reason.IO_ERROR, "malformed " + offsetsPath, boot, pidns, machine, true);
            }
            shift = parsed.get();
        }

        return new ProcView(Optional.empty(), shift, boot, pidns, machine, true);
    }

    /**
     * Whether {@code /proc/self/timens_offsets} has a {@code boottime} line whose numbers are all 0,
     * as every process outside a time namespace reads: then there is nothing to take off, and
     * {@link BootOffset} is not needed to say so. Anything else is left to {@link BootOffset#parse}.
     */
    static boolean zeroBoottime(String offsets) {
        int at = offsets.startsWith("boottime ") ? 0 : offsets.indexOf("\nboottime ") + 1;
        if (at <= 0 && !offsets.startsWith("boottime ")) {
            return false;
        }
        int zeros = 0;
        for (int i = at + "boottime ".length(); i < offsets.length() && offsets.charAt(i) != '\n'; i++) {
            char c = offsets.charAt(i);
            if (c == '0') {
                if (i == 0 || offsets.charAt(i - 1) == ' ' || offsets.charAt(i - 1) == '\t') {
                    zeros++;
                }
            } else if (c != ' ' && c != '\t') {
                return false;
            }
        }
        return zeros == 2;
    }

    /** Whether start times are shown shifted to this process: a time namespace with a boottime offset. */
    boolean shifted() {
        return shift != null;
    }

    /** The fingerprint of a start time shown as {@code shownTicks} to this process. */
    String fingerprint(long shownTicks) {
        return shift == null ? Long.toString(shownTicks) : shift.fingerprint(shownTicks);
    }

    /** Whether a recorded fingerprint names the process whose fingerprint reads {@code current} here ({@link BootOffset#sameStart}). */
    boolean sameStart(String recorded, String current) {
        return shift == null ? recorded.equals(current) : shift.sameStart(recorded, current);
    }

    private static ProcView untrusted(Reason reason, String detail, Optional<String> boot, Optional<String> pidns,
                                      Optional<String> machine, boolean settled) {
        return new ProcView(Optional.of(new ProcessLookup.Unknown(reason, detail)), null,
                boot, pidns, machine, settled);
    }

    /** The first of {@link #MACHINE_ID_PATHS} below {@code root} that holds a valid id, or empty. */
    static Optional<String> machineId(ProcReader r, String root) {
        for (String path : MACHINE_ID_PATHS) {
            if (r.read(root + path, true) == ProcReader.OK) {
                Optional<String> id = parseMachineId(r.text());
                if (id.isPresent()) {
                    return id;
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The machine id a file's text holds, or empty when it is none: systemd's machine-id(5) is one
     * line of 32 lowercase hex digits. Anything else (empty, {@code uninitialized} as written during
     * first boot, all zeros, another length, upper case, spaces) is no id, and nothing is recorded
     * rather than a value other machines may share by chance.
     */
    static Optional<String> parseMachineId(String text) {
        String id = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        if (id.length() != 32) {
            return Optional.empty();
        }
        boolean zeros = true;
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return Optional.empty();
            }
            zeros &= c == '0';
        }
        return zeros ? Optional.empty() : Optional.of(id);
    }

    /** A small file's text, trimmed; empty when it cannot be read or holds nothing. */
    static Optional<String> readSmallFile(ProcReader r, String path) {
        if (r.read(path, true) != ProcReader.OK) {
            return Optional.empty();
        }
        String text = r.text().trim();
        return text.isEmpty() ? Optional.empty() : Optional.of(text);
    }

    /** The inode {@code /proc/self/ns/KIND} links to ({@code pid:[4026531836]}), or empty. */
    static Optional<String> namespace(String procRoot, String kind) {
        try {
            String link = Files.readSymbolicLink(Path.of(procRoot, "self", "ns", kind)).toString();
            int open = link.indexOf('[');
            int close = link.lastIndexOf(']');
            if (link.startsWith(kind + ":") && open > 0 && close > open + 1) {
                return Optional.of(link.substring(open + 1, close));
            }
            return Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }
}
