package dev.proclive.linux;

import java.nio.charset.StandardCharsets;

/**
 * Reads {@code /proc/self/mountinfo} (proc(5)) to learn whether the procfs this process sees
 * hides other users' processes.
 */
final class MountInfo {

    private MountInfo() {
    }

    /**
     * Whether the procfs mounted at {@code mountPoint} hides processes: {@code hidepid=} other
     * than {@code 0}/{@code off} ({@code 1}/{@code noaccess}, {@code 2}/{@code invisible},
     * {@code 4}/{@code ptraceable}) or {@code subset=pid}. The last matching line wins: later
     * mounts stack on earlier ones.
     */
    static boolean hidesPids(String mountinfo, String mountPoint) {
        boolean hides = false;
        for (String line : mountinfo.split("\n")) {
            // id parent major:minor root mount-point options [optional…] - fstype source super-options
            String[] f = line.split(" ");
            int dash = indexOf(f, "-");
            if (f.length < 6 || dash < 0 || dash + 3 >= f.length) {
                continue;
            }
            if (!unescape(f[4]).equals(mountPoint) || !f[dash + 1].equals("proc")) {
                continue;
            }
            hides = false;
            for (String option : f[dash + 3].split(",")) {
                if (option.startsWith("hidepid=")) {
                    String value = option.substring("hidepid=".length());
                    hides |= !value.equals("0") && !value.equals("off");
                } else if (option.equals("subset=pid")) {
                    hides = true;
                }
            }
        }
        return hides;
    }

    /**
     * Where the cgroup v2 hierarchy is mounted (the mount point of the last {@code cgroup2} line
     * whose root is {@code /}), or null when none is: a hybrid system mounts it beside the v1
     * controllers ({@code /sys/fs/cgroup/unified}), a unified one at {@code /sys/fs/cgroup}.
     */
    static String cgroup2(String mountinfo) {
        String found = null;
        for (String line : mountinfo.split("\n")) {
            String[] f = line.split(" ");
            int dash = indexOf(f, "-");
            if (f.length < 6 || dash < 0 || dash + 1 >= f.length) {
                continue;
            }
            if (f[dash + 1].equals("cgroup2") && f[3].equals("/")) {
                found = unescape(f[4]);
            }
        }
        return found;
    }

    private static int indexOf(String[] fields, String wanted) {
        for (int i = 6; i < fields.length; i++) {
            if (fields[i].equals(wanted)) {
                return i;
            }
        }
        return -1;
    }

    /** Mount points escape space, tab, newline and backslash as octal ({@code \040}). */
    static String unescape(String field) {
        if (field.indexOf('\\') < 0) {
            return field;
        }
        byte[] out = new byte[field.length()];
        int n = 0;
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length() && isOctal(field, i + 1)) {
                out[n++] = (byte) Integer.parseInt(field.substring(i + 1, i + 4), 8);
                i += 3;
            } else {
                out[n++] = (byte) c;
            }
        }
        return new String(out, 0, n, StandardCharsets.UTF_8);
    }

    private static boolean isOctal(String s, int from) {
        for (int i = from; i < from + 3; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '7') {
                return false;
            }
        }
        return true;
    }
}
