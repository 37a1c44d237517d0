package dev.proclive.macos;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import dev.proclive.spi.internal.ExitEvents;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * Exit events on macOS: one {@code kqueue} with an {@code EVFILT_PROC}/{@code NOTE_EXIT} filter
 * per watched process (no descriptor each: the handle is the pid) and an {@code EVFILT_USER}
 * event to wake the waiter. A registration is made with {@code EV_RECEIPT}, so that a pid already
 * gone answers ESRCH at once.
 */
final class KqueueEvents implements ExitEvents {

    private static final int ESRCH = 3;
    private static final int EINTR = 4;

    private final LibC libc;
    private final int kq;
    private final Memory ready = new Memory((long) KEvent.SIZE * 256);
    private volatile boolean closed;

    private KqueueEvents(LibC libc, int kq) {
        this.libc = libc;
        this.kq = kq;
    }

    static Optional<ExitEvents> open() {
        LibC libc;
        try {
            libc = Native.load("c", LibC.class);
        } catch (LinkageError e) {
            return Optional.empty();
        }
        int kq;
        try {
            kq = libc.kqueue();
        } catch (LastErrorException e) {
            return Optional.empty();
        }
        KqueueEvents events = new KqueueEvents(libc, kq);
        if (events.change(KEvent.addWake(), false) != 0) {
            events.close();
            return Optional.empty();
        }
        return Optional.of(events);
    }

    /** Submits one change; with a receipt, the errno it reports (0: done), else 0 or the call's errno. */
    private long change(KEvent e, boolean receipt) {
        try (Memory in = new Memory(KEvent.SIZE); Memory out = new Memory(KEvent.SIZE)) {
            in.write(0, e.bytes(), 0, KEvent.SIZE);
            try (Memory zero = new Memory(16)) {
                zero.clear();
                int n = libc.kevent(kq, in, 1, receipt ? out : null, receipt ? 1 : 0, zero);
                if (receipt && n == 1) {
                    KEvent answer = KEvent.decode(out.getByteBuffer(0, KEvent.SIZE), 0);
                    return answer.failed() ? answer.data() : 0;
                }
                return 0;
            }
        } catch (LastErrorException failed) {
            return failed.getErrorCode() == 0 ? -1 : failed.getErrorCode();
        }
    }

    @Override
    public Registration watch(long pid) {
        if (closed) {
            return new Registration.Unavailable("the exit events were closed");
        }
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
            return new Registration.Gone();
        }
        long errno = change(KEvent.watchExit(pid), true);
        if (errno == 0) {
            return new Registration.Watching(pid);
        }
        if (errno == ESRCH) {
            return new Registration.Gone();
        }
        return new Registration.Unavailable("kevent(EVFILT_PROC): errno " + errno);
    }

    @Override
    public void unwatch(long handle) {
        if (handle > 0 && handle <= Integer.MAX_VALUE && !closed) {
            change(KEvent.unwatchExit(handle), true); // ENOENT once it fired: nothing to remove
        }
    }

    @Override
    public int await(long timeoutMillis, long[] handles) {
        int max = (int) Math.min(handles.length, ready.size() / KEvent.SIZE);
        int n;
        try (Memory timeout = timeoutMillis < 0 ? null : new Memory(16)) {
            if (timeout != null) {
                timeout.setLong(0, timeoutMillis / 1000);
                timeout.setLong(8, (timeoutMillis % 1000) * 1_000_000);
            }
            n = libc.kevent(kq, null, 0, ready, max, timeout);
        } catch (LastErrorException e) {
            if (e.getErrorCode() == EINTR) {
                return 0;
            }
            throw new IllegalStateException("kevent: " + e.getMessage(), e);
        }
        ByteBuffer events = ready.getByteBuffer(0, (long) n * KEvent.SIZE);
        int count = 0;
        for (int i = 0; i < n; i++) {
            KEvent e = KEvent.decode(events, i * KEvent.SIZE);
            if (e.exited()) {
                handles[count++] = e.ident();
            }
        }
        return count;
    }

    @Override
    public void wake() {
        if (!closed) {
            change(KEvent.triggerWake(), false);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            libc.close(kq);
        } catch (LastErrorException e) {
            // freed whatever close(2) says
        }
    }

    interface LibC extends Library {
        int kqueue() throws LastErrorException;

        int kevent(int kq, Pointer changelist, int nchanges, Pointer eventlist, int nevents, Pointer timeout)
                throws LastErrorException;

        int close(int fd) throws LastErrorException;
    }
}
