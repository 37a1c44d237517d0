package dev.proclive.macos;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One {@code struct kevent} as 64-bit macOS lays it out (sys/event.h), 32 bytes, little-endian:
 * {@code ident} (uintptr_t) at 0, {@code filter} (int16_t) at 8, {@code flags} (uint16_t) at 10,
 * {@code fflags} (uint32_t) at 12, {@code data} (intptr_t) at 16, {@code udata} (void *) at 24.
 * Encoded and decoded here, bytes in and out, so that the layout is tested on every OS.
 */
record KEvent(long ident, short filter, int flags, int fflags, long data, long udata) {

    static final int SIZE = 32;

    static final short EVFILT_PROC = -5;
    static final short EVFILT_USER = -10;

    static final int EV_ADD = 0x0001;
    static final int EV_DELETE = 0x0002;
    static final int EV_CLEAR = 0x0020;
    static final int EV_RECEIPT = 0x0040;
    static final int EV_ERROR = 0x4000;

    static final int NOTE_EXIT = 0x80000000;
    static final int NOTE_TRIGGER = 0x01000000;

    /** Watch process {@code pid} for its exit; the answer is a receipt (EV_ERROR, errno in data). */
    static KEvent watchExit(long pid) {
        return new KEvent(pid, EVFILT_PROC, EV_ADD | EV_RECEIPT, NOTE_EXIT, 0, 0);
    }

    /** Stop watching process {@code pid}. */
    static KEvent unwatchExit(long pid) {
        return new KEvent(pid, EVFILT_PROC, EV_DELETE | EV_RECEIPT, 0, 0, 0);
    }

    /** The user event that wakes a waiter: added once, then triggered. */
    static KEvent addWake() {
        return new KEvent(0, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, 0);
    }

    static KEvent triggerWake() {
        return new KEvent(0, EVFILT_USER, 0, NOTE_TRIGGER, 0, 0);
    }

    /** Whether this is a receipt that reports an error: then {@link #data()} is the errno. */
    boolean failed() {
        return (flags & EV_ERROR) != 0 && data != 0;
    }

    /** Whether this reports a process's exit. */
    boolean exited() {
        return filter == EVFILT_PROC && (fflags & NOTE_EXIT) != 0 && (flags & EV_ERROR) == 0;
    }

    void encode(ByteBuffer into, int offset) {
        ByteBuffer b = into.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(offset, ident);
        b.putShort(offset + 8, filter);
        b.putShort(offset + 10, (short) flags);
        b.putInt(offset + 12, fflags);
        b.putLong(offset + 16, data);
        b.putLong(offset + 24, udata);
    }

    byte[] bytes() {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        encode(b, 0);
        return b.array();
    }

    static KEvent decode(ByteBuffer from, int offset) {
        ByteBuffer b = from.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        return new KEvent(b.getLong(offset), b.getShort(offset + 8), Short.toUnsignedInt(b.getShort(offset + 10)),
                b.getInt(offset + 12), b.getLong(offset + 16), b.getLong(offset + 24));
    }
}
