package dev.proclive.macos;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Builds a synthetic {@code struct kinfo_proc}, field by field, at the offsets the decoder names. */
final class KinfoProcBuilder {

    final byte[] bytes = new byte[KinfoProc.SIZE];
    private final ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);

    KinfoProcBuilder() {
        // Noise everywhere, so a decoder that reads the wrong offset notices.
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (0xA5 ^ i);
        }
        stat(2); // SRUN
    }

    KinfoProcBuilder pid(int pid) {
        b.putInt(KinfoProc.P_PID, pid);
        return this;
    }

    KinfoProcBuilder ppid(int ppid) {
        b.putInt(KinfoProc.E_PPID, ppid);
        return this;
    }

    KinfoProcBuilder start(long seconds, int micros) {
        b.putLong(KinfoProc.P_STARTTIME_SEC, seconds);
        b.putInt(KinfoProc.P_STARTTIME_USEC, micros);
        return this;
    }

    KinfoProcBuilder stat(int stat) {
        bytes[KinfoProc.P_STAT] = (byte) stat;
        return this;
    }

    /** kp_eproc.e_ucred.cr_uid (offset 420), the effective user id. */
    KinfoProcBuilder uid(int uid) {
        b.putInt(KinfoProc.CR_UID, uid);
        return this;
    }

    /** Writes {@code name}'s bytes at p_comm, NUL-terminated when it leaves room. */
    KinfoProcBuilder comm(byte[] name) {
        for (int i = 0; i < KinfoProc.P_COMM_LENGTH; i++) {
            bytes[KinfoProc.P_COMM + i] = i < name.length ? name[i] : 0;
        }
        return this;
    }

    KinfoProcBuilder comm(String name) {
        return comm(name.getBytes(StandardCharsets.UTF_8));
    }

    static KinfoProcBuilder process(int pid) {
        return new KinfoProcBuilder().pid(pid).ppid(1).start(1_700_000_000L, 42).comm("node").uid(501);
    }
}
