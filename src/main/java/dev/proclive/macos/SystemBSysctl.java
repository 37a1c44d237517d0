package dev.proclive.macos;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.platform.mac.IOKit;
import com.sun.jna.platform.mac.IOKitUtil;
import com.sun.jna.platform.mac.SystemB;
import com.sun.jna.platform.unix.LibCAPI;
import java.nio.charset.StandardCharsets;

/**
 * {@link Sysctl} through jna-platform's {@link SystemB} (libSystem) and, for the hardware UUID,
 * its {@link IOKitUtil}; each library is loaded on first use.
 */
final class SystemBSysctl implements Sysctl {

    /** sys/sysctl.h */
    private static final int CTL_KERN = 1;
    private static final int KERN_PROC = 14;
    private static final int KERN_PROC_PID = 1;
    private static final int KERN_PROC_ALL = 0;
    private static final int KERN_ARGMAX = 8;
    private static final int KERN_PROCARGS2 = 49;

    /** MAXHOSTNAMELEN (sys/param.h). */
    private static final int MAX_HOST_NAME = 256;

    @Override
    public long getpid() {
        return SystemB.INSTANCE.getpid();
    }

    @Override
    public int kinfoProc(int pid, byte[] buffer) throws ErrnoException {
        Memory memory = new Memory(buffer.length);
        memory.clear();
        LibCAPI.size_t.ByReference length = new LibCAPI.size_t.ByReference(buffer.length);
        int[] mib = {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid};
        if (SystemB.INSTANCE.sysctl(mib, mib.length, memory, length, null, LibCAPI.size_t.ZERO) != 0) {
            throw new ErrnoException(Native.getLastError());
        }
        int written = (int) Math.min(length.longValue(), buffer.length);
        memory.read(0, buffer, 0, written);
        return (int) Math.min(length.longValue(), Integer.MAX_VALUE);
    }

    @Override
    public int argMax() throws ErrnoException {
        Memory memory = new Memory(Integer.BYTES);
        memory.clear();
        LibCAPI.size_t.ByReference length = new LibCAPI.size_t.ByReference(Integer.BYTES);
        int[] mib = {CTL_KERN, KERN_ARGMAX};
        if (SystemB.INSTANCE.sysctl(mib, mib.length, memory, length, null, LibCAPI.size_t.ZERO) != 0) {
            throw new ErrnoException(Native.getLastError());
        }
        return memory.getInt(0);
    }

    @Override
    public int procArgs(int pid, byte[] buffer) throws ErrnoException {
        Memory memory = new Memory(buffer.length);
        memory.clear();
        LibCAPI.size_t.ByReference length = new LibCAPI.size_t.ByReference(buffer.length);
        int[] mib = {CTL_KERN, KERN_PROCARGS2, pid};
        if (SystemB.INSTANCE.sysctl(mib, mib.length, memory, length, null, LibCAPI.size_t.ZERO) != 0) {
            throw new ErrnoException(Native.getLastError());
        }
        int written = (int) Math.min(length.longValue(), buffer.length);
        memory.read(0, buffer, 0, written);
        return written;
    }

    @Override
    public int[] pids() throws ErrnoException {
        int[] mib = {CTL_KERN, KERN_PROC, KERN_PROC_ALL, 0};
        for (int attempt = 0; attempt < 4; attempt++) {
            LibCAPI.size_t.ByReference length = new LibCAPI.size_t.ByReference(0);
            if (SystemB.INSTANCE.sysctl(mib, 3, null, length, null, LibCAPI.size_t.ZERO) != 0) {
                throw new ErrnoException(Native.getLastError());
            }
            long size = length.longValue() + 64L * KinfoProc.SIZE; // room for processes started meanwhile
            Memory memory = new Memory(size);
            length = new LibCAPI.size_t.ByReference(size);
            if (SystemB.INSTANCE.sysctl(mib, 3, memory, length, null, LibCAPI.size_t.ZERO) != 0) {
                int errno = Native.getLastError();
                if (errno == 12) { // ENOMEM: more processes than room; ask again
                    continue;
                }
                throw new ErrnoException(errno);
            }
            int count = (int) (length.longValue() / KinfoProc.SIZE);
            int[] pids = new int[count];
            for (int i = 0; i < count; i++) {
                pids[i] = memory.getInt((long) i * KinfoProc.SIZE + KinfoProc.P_PID);
            }
            return pids;
        }
        throw new ErrnoException(12);
    }

    @Override
    public String hostName() {
        Memory memory = new Memory(MAX_HOST_NAME);
        memory.clear();
        LibCAPI.size_t.ByReference length = new LibCAPI.size_t.ByReference(MAX_HOST_NAME);
        if (SystemB.INSTANCE.sysctlbyname("kern.hostname", memory, length, null, LibCAPI.size_t.ZERO) != 0) {
            return null;
        }
        byte[] bytes = memory.getByteArray(0, (int) Math.min(length.longValue(), MAX_HOST_NAME));
        int end = 0;
        while (end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, 0, end, StandardCharsets.UTF_8);
    }

    @Override
    public String platformUuid() {
        IOKit.IOService service = IOKitUtil.getMatchingService("IOPlatformExpertDevice");
        if (service == null) {
            return null;
        }
        try {
            return service.getStringProperty("IOPlatformUUID");
        } finally {
            service.release();
        }
    }
}
