package dev.proclive.macos;

/** The kernel calls the macOS backend makes; a seam so tests run them without a Mac. */
interface Sysctl {

    /** getpid(2). */
    long getpid();

    /**
     * {@code sysctl({CTL_KERN, KERN_PROC, KERN_PROC_PID, pid})} into {@code buffer}.
     *
     * @return the length the kernel wrote: 0 when it knows no such process
     * @throws ErrnoException when the call failed, with the errno it left (0 if it left none)
     */
    int kinfoProc(int pid, byte[] buffer) throws ErrnoException;

    /** {@code sysctl({CTL_KERN, KERN_ARGMAX})}: how large a process's arguments can be. */
    int argMax() throws ErrnoException;

    /**
     * {@code sysctl({CTL_KERN, KERN_PROCARGS2, pid})} into {@code buffer}: allowed for processes
     * of the same user (EINVAL otherwise, and for zombies).
     *
     * @return the length the kernel wrote
     * @throws ErrnoException when the call failed
     */
    int procArgs(int pid, byte[] buffer) throws ErrnoException;

    /** {@code sysctlbyname("kern.hostname")}, or null when it fails. */
    String hostName();

    /**
     * {@code IOPlatformUUID} of the {@code IOPlatformExpertDevice} registry entry (IOKit), as the
     * registry holds it, or null when there is none.
     */
    String platformUuid();

    /** Every process's pid, from {@code sysctl(CTL_KERN, KERN_PROC, KERN_PROC_ALL)}. */
    int[] pids() throws ErrnoException;
}
