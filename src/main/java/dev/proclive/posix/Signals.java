package dev.proclive.posix;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;

/**
 * {@code kill(pid, signal)}: passes a signal on to a process without starting one. JNA and the C
 * library ({@link CLibrary}) load on the first call.
 */
public final class Signals {

    private Signals() {
    }

    /**
     * Sends {@code signal} (this platform's number, as {@code sun.misc.Signal#getNumber()} gives it)
     * to process {@code pid}.
     *
     * @return true if it was sent; false if the process is gone, may not be signalled, or JNA
     *         cannot load
     */
    public static boolean send(long pid, int signal) {
        if (pid <= 0 || pid > Integer.MAX_VALUE || signal <= 0) {
            return false;
        }
        try {
            return Calls.LOADED && Calls.kill((int) pid, signal) == 0;
        } catch (LastErrorException | LinkageError e) {
            return false;
        }
    }

    private static final class Calls {
        static final boolean LOADED;

        static {
            boolean loaded = false;
            try {
                Native.register(Calls.class, CLibrary.load());
                loaded = true;
            } catch (LinkageError | RuntimeException e) {
                // no JNA, or no C library by that name: nothing is sent
            }
            LOADED = loaded;
        }

        private Calls() {
        }

        static native int kill(int pid, int signal) throws LastErrorException;
    }
}
