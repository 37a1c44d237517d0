package dev.proclive.linux;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;

/**
 * {@code kill(pid, 0)} (kill(2)): asks whether a pid exists without reading {@code /proc}, for
 * when {@code hidepid} hides the entry. The only native call of the Linux backend; JNA loads on
 * first use (about 100 ms) and never on a path where {@code /proc} can answer.
 */
final class Kill implements PidPresence {

    static final Kill INSTANCE = new Kill();

    /** errno-base.h */
    private static final int EPERM = 1;
    private static final int ESRCH = 3;

    private Kill() {
    }

    @Override
    public Presence probe(long pid) {
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
            return Presence.ABSENT; // pid_t is 32 bits: no process can have this id
        }
        LibC libc;
        try {
            libc = Holder.LIBC;
        } catch (LinkageError e) {
            return Presence.UNAVAILABLE;
        }
        try {
            libc.kill((int) pid, 0);
            return Presence.PRESENT;
        } catch (LastErrorException e) {
            switch (e.getErrorCode()) {
                case ESRCH:
                    return Presence.ABSENT;
                case EPERM:
                    return Presence.PRESENT;
                default:
                    return Presence.UNAVAILABLE;
            }
        } catch (RuntimeException | LinkageError e) {
            return Presence.UNAVAILABLE;
        }
    }

    /** Loads libc through JNA when first touched, and only then. */
    private static final class Holder {
        static final LibC LIBC = Native.load(dev.proclive.posix.CLibrary.load().getName(), LibC.class);
    }

    interface LibC extends Library {
        int kill(int pid, int signal) throws LastErrorException;
    }
}
