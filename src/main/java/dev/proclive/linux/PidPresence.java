package dev.proclive.linux;

/** Whether a pid exists, asked of the kernel without {@code /proc}; a seam so tests can fake it. */
interface PidPresence {

    enum Presence {
        /** A process or thread has this id, whether or not we may signal it. */
        PRESENT,
        /** No task has this id (ESRCH). */
        ABSENT,
        /** The kernel could not be asked (native code unavailable, an unexpected errno). */
        UNAVAILABLE
    }

    Presence probe(long pid);
}
