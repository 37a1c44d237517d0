package dev.proclive.macos;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Decodes the {@code struct kinfo_proc} that {@code sysctl(CTL_KERN, KERN_PROC, KERN_PROC_PID, pid)}
 * writes: a pure function over bytes, tested on every OS. The layout is the same on x86_64 and
 * arm64, both little-endian: {@code struct extern_proc kp_proc} (xnu bsd/sys/proc.h) followed by
 * {@code struct eproc kp_eproc} (xnu bsd/sys/sysctl.h).
 *
 * @param pid       {@code kp_proc.p_pid}
 * @param parentPid {@code kp_eproc.e_ppid}
 * @param name      {@code kp_proc.p_comm}, up to its first NUL, UTF-8 with replacement
 * @param start     {@code kp_proc.p_starttime} as {@code "%d.%06d"} (seconds.microseconds), the
 *                  exact string the Go package records
 * @param zombie    {@code kp_proc.p_stat == SZOMB}
 * @param uid       {@code kp_eproc.e_ucred.cr_uid}, the effective user id
 */
record KinfoProc(long pid, long parentPid, String name, String start, boolean zombie, long uid) {

    /** sizeof(struct kinfo_proc). */
    static final int SIZE = 648;

    /** kp_proc.p_un.__p_starttime.tv_sec: int64 (struct timeval, sys/_types/_timeval.h). */
    static final int P_STARTTIME_SEC = 0;
    /** kp_proc.p_un.__p_starttime.tv_usec: __darwin_suseconds_t, int32. */
    static final int P_STARTTIME_USEC = 8;
    /** kp_proc.p_stat: char, one of SIDL SRUN SSLEEP SSTOP SZOMB (sys/proc.h). */
    static final int P_STAT = 36;
    /** kp_proc.p_pid: pid_t, int32. */
    static final int P_PID = 40;
    /** kp_proc.p_comm: char[MAXCOMLEN + 1]. */
    static final int P_COMM = 243;
    /** MAXCOMLEN (sys/param.h) + 1 for the NUL. */
    static final int P_COMM_LENGTH = 17;
    /** kp_eproc.e_ppid: pid_t, int32. */
    static final int E_PPID = 560;
    /**
     * {@code kp_eproc.e_ucred.cr_uid}: {@code kp_eproc} at 296, {@code e_ucred} 120 into it (after
     * two pointers and the 104-byte {@code struct _pcred}), {@code cr_uid} 4 into that.
     */
    static final int CR_UID = 420;

    /** sys/proc.h: process being terminated, waiting for its parent to reap it. */
    static final byte SZOMB = 5;

    /** What a sysctl answer holds. */
    enum Status {
        /** A whole structure for the pid that was asked. */
        VALID,
        /** Length 0: the kernel knows no such process. */
        NO_PROCESS,
        /** Any other length: not a structure this decoder understands. */
        WRONG_LENGTH,
        /** A whole structure, but for another pid. */
        OTHER_PID
    }

    /** Whether the first {@code length} bytes of {@code buffer} are a valid answer for {@code pid}. */
    static Status check(byte[] buffer, int length, long pid) {
        if (length == 0) {
            return Status.NO_PROCESS;
        }
        if (length != SIZE || buffer.length < SIZE) {
            return Status.WRONG_LENGTH;
        }
        return le(buffer).getInt(P_PID) == pid ? Status.VALID : Status.OTHER_PID;
    }

    /**
     * Decodes a structure {@link #check} found {@link Status#VALID}.
     *
     * @throws IllegalArgumentException if {@code buffer} holds fewer than {@link #SIZE} bytes
     */
    static KinfoProc decode(byte[] buffer) {
        if (buffer.length < SIZE) {
            throw new IllegalArgumentException("kinfo_proc needs " + SIZE + " bytes, got " + buffer.length);
        }
        ByteBuffer b = le(buffer);
        long seconds = b.getLong(P_STARTTIME_SEC);
        int micros = b.getInt(P_STARTTIME_USEC);
        int nameLength = 0;
        while (nameLength < P_COMM_LENGTH && buffer[P_COMM + nameLength] != 0) {
            nameLength++;
        }
        return new KinfoProc(
                b.getInt(P_PID),
                b.getInt(E_PPID),
                new String(buffer, P_COMM, nameLength, StandardCharsets.UTF_8),
                startFingerprint(seconds, micros),
                buffer[P_STAT] == SZOMB,
                Integer.toUnsignedLong(b.getInt(CR_UID)));
    }

    /**
     * Go's {@code fmt.Sprintf("%d.%06d", tv.Sec, tv.Usec)}: zero-padded to six characters, a
     * sign included (never seen from the kernel, but decoded the same way).
     */
    static String startFingerprint(long seconds, int micros) {
        String digits = Long.toString(Math.abs((long) micros));
        StringBuilder s = new StringBuilder(24).append(seconds).append('.');
        int width = 6;
        if (micros < 0) {
            s.append('-');
            width--;
        }
        for (int i = digits.length(); i < width; i++) {
            s.append('0');
        }
        return s.append(digits).toString();
    }

    private static ByteBuffer le(byte[] buffer) {
        return ByteBuffer.wrap(buffer).order(ByteOrder.LITTLE_ENDIAN);
    }
}
