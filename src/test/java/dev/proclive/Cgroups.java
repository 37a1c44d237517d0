package dev.proclive;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Where this JVM stands in the cgroup v2 hierarchy, for tests of what a spawned command's cgroup proves. */
public final class Cgroups {

    private Cgroups() {
    }

    /** Where the cgroup v2 hierarchy is mounted in this mount namespace, if it is. */
    public static Optional<Path> mount() throws IOException {
        Optional<Path> found = Optional.empty();
        for (String line : Files.readAllLines(Path.of("/proc/self/mounts"), StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            if (f.length > 2 && f[2].equals("cgroup2")) {
                found = Optional.of(Path.of(f[1]));
            }
        }
        return found;
    }

    /** The cgroup v2 directory this JVM is in; commands' cgroups are made below it. */
    public static Optional<Path> own() throws IOException {
        Optional<Path> mount = mount();
        if (mount.isEmpty()) {
            return Optional.empty();
        }
        for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8)) {
            if (line.startsWith("0::/")) {
                String own = line.substring(3);
                return Optional.of(Path.of(mount.get() + (own.equals("/") ? "" : own)));
            }
        }
        return Optional.empty();
    }

    /** Whether a spawn here can make a cgroup: this JVM's own cgroup v2 directory is writable (root, or delegated). */
    public static boolean canBeMade() {
        try {
            return own().map(dir -> Files.isWritable(dir.resolve("cgroup.procs"))).orElse(false);
        } catch (IOException e) {
            return false;
        }
    }
}
