package dev.proclive;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the running Linux kernel offers, for tests that need it to skip, saying why, where it does not. */
public final class Kernel {

    private Kernel() {
    }

    /** Why a test of exit statuses skips here: the kernel keeps none for a pidfd before Linux 6.15. */
    public static final String NO_EXIT_STATUS = "the kernel keeps no exit status for a pidfd before Linux 6.15";

    /** Whether it keeps a reaped process's exit status for its pidfds ({@code PIDFD_INFO_EXIT}, Linux 6.15 and later). */
    public static boolean tellsExitStatus() throws IOException {
        String[] v = Files.readString(Path.of("/proc/sys/kernel/osrelease")).strip().split("[.-]");
        int major = Integer.parseInt(v[0]);
        int minor = Integer.parseInt(v[1]);
        return major > 6 || major == 6 && minor >= 15;
    }
}
