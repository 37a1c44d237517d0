package dev.proclive;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The floor of {@code bench/coldstart.sh}: what {@link ColdStartMain} reads, read by one plain class
 * that uses no proclive code. Its own {@code /proc/self/stat}, each ancestor's {@code stat} up to
 * the first that is not a shell, the boot id, the PID namespace's link, the machine id, its own
 * {@code status} and {@code timens_offsets}, the host name, and the owner's {@code stat} again.
 * With the argument {@code api} it also loads the three types a caller of
 * {@code resolveOwner()} and {@code check} must name ({@link ProcLive}, {@link Identity},
 * {@link Liveness}) from wherever the class path has them, and runs none of their code: what any
 * library shipped in that jar costs before it does anything.
 */
public final class FloorMain {

    private static final byte[] BUFFER = new byte[4096];
    private static final String SHELLS = " sh bash dash zsh ksh fish ";

    private FloorMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("api")) {
            ClassLoader loader = FloorMain.class.getClassLoader();
            Class.forName("dev.proclive.ProcLive", false, loader);
            Class.forName("dev.proclive.Identity", false, loader);
            Class.forName("dev.proclive.Liveness", false, loader);
        }
        String boot = read("/proc/sys/kernel/random/boot_id");
        String pidns = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
        String machine = read("/etc/machine-id");
        String status = read("/proc/self/status");
        String offsets = read("/proc/self/timens_offsets");
        long pid = field(read("/proc/self/stat"), 1);
        String start = null;
        for (int depth = 0; depth < 64 && pid > 1; depth++) {
            String stat = read("/proc/" + pid + "/stat");
            if (stat == null) {
                break;
            }
            String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
            if (!SHELLS.contains(" " + comm + " ")) {
                start = Long.toString(field(stat, 19));
                break;
            }
            pid = field(stat, 1);
        }
        String host = read("/proc/sys/kernel/hostname");
        String again = start == null ? null : read("/proc/" + pid + "/stat");
        boolean alive = again != null && Long.toString(field(again, 19)).equals(start) && boot != null
                && !pidns.isEmpty() && host != null && (machine != null || status != null || offsets != null);
        System.out.println(alive ? "ALIVE" : "UNKNOWN");
    }

    /** The {@code index}th field after the command name of a {@code stat} line (1: the parent). */
    private static long field(String stat, int index) {
        int at = stat.lastIndexOf(')') + 2;
        for (int i = 0; i < index; i++) {
            at = stat.indexOf(' ', at) + 1;
        }
        int end = stat.indexOf(' ', at);
        return Long.parseLong(stat.substring(at, end < 0 ? stat.length() : end).trim());
    }

    private static String read(String path) {
        try (FileInputStream in = new FileInputStream(path)) {
            int n = in.read(BUFFER);
            return n < 0 ? "" : new String(BUFFER, 0, n, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            return null;
        }
    }
}
