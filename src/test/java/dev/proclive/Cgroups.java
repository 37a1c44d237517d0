package dev.proclive;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Where this JVM stands in the cgroup v2 hierarchy, for tests of what a spawned command's cgroup proves. */
public final class Cgroups {

    /** The tags of the stores whose empty cgroups {@link #removeEmptyOfNoted} removes. */
    private static final Set<String> NOTED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private Cgroups() {
    }

    /** Notes the store over lease directory {@code dir}, while it exists: its name is in its cgroups' names. */
    public static void note(Path dir) {
        try {
            NOTED.add(dev.proclive.lease.book.LeaseNames.storeTag(
                    Map.of(dev.proclive.lease.book.LeaseNames.DIR_VARIABLE, dir.toRealPath().toString())));
        } catch (IOException e) {
            // never opened: none of its cgroups to remove
        }
    }

    /**
     * Removes the empty cgroups the noted stores left below this JVM's own (a {@code lease run} killed -9 leaves
     * its command's): theirs alone, so never one another store has just made; one not empty stays (rmdir refuses).
     */
    public static void removeEmptyOfNoted() throws IOException {
        Optional<Path> own = own();
        if (own.isEmpty() || NOTED.isEmpty()) {
            return;
        }
        try (java.util.stream.Stream<Path> all = Files.list(own.get())) {
            for (Path c : all.toList()) {
                String n = c.getFileName().toString();
                if (n.startsWith("proclive.") && NOTED.stream().anyMatch(tag -> n.contains("." + tag + "."))) {
                    try {
                        Files.delete(c); // rmdir: the kernel refuses it while any process is in it
                    } catch (IOException busy) {
                        // not empty, or gone already
                    }
                }
            }
        }
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
