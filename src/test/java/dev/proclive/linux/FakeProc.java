package dev.proclive.linux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A procfs-shaped directory tree for {@link LinuxProcessIntrospector} tests. */
final class FakeProc {

    final Path root;

    FakeProc(Path root) {
        this.root = root;
        self(1000, "self.status");
        file("sys/kernel/hostname", "fakehost\n");
        file("sys/kernel/random/boot_id", "0f4c5e0e-1111-2222-3333-444455556666\n");
        file("self/mountinfo", Fixtures.text("mountinfo/plain.mountinfo"));
        link("self/ns/pid", "pid:[4026531836]");
        link("self/ns/user", "user:[4026531837]");
        file(MACHINE + "/etc/machine-id", FAKE_MACHINE + "\n");
    }

    /** Where the fixtures' {@code etc/machine-id} and {@code var/lib/dbus/machine-id} live, below {@link #root}. */
    static final String MACHINE = "machine";

    /** The machine id a new tree holds in {@code etc/machine-id}. */
    static final String FAKE_MACHINE = "0123456789abcdef0123456789abcdef";

    String machineRoot() {
        return root.resolve(MACHINE).toString();
    }

    /** The calling process: pid {@code pid} with the given status fixture. */
    FakeProc self(long pid, String statusFixture) {
        file("self/stat", pid + " (java) S 1 " + pid + " " + pid
                + " 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0\n");
        file("self/status", Fixtures.text("status/" + statusFixture));
        return this;
    }

    /** Process {@code pid} with a stat line from a fixture whose pid is rewritten to {@code pid}. */
    FakeProc process(long pid, String statFixture) {
        String line = Fixtures.text("stat/" + statFixture);
        file(pid + "/stat", pid + line.substring(line.indexOf(' ')));
        String status = Fixtures.text("status/self.status")
                .replaceAll("(?m)^Tgid:.*$", "Tgid:\t" + pid)
                .replaceAll("(?m)^Threads:.*$", "Threads:\t1");
        file(pid + "/status", status);
        return this;
    }

    FakeProc status(long pid, String content) {
        file(pid + "/status", content);
        return this;
    }

    FakeProc mountinfo(String fixture) {
        file("self/mountinfo", Fixtures.text("mountinfo/" + fixture).replace(" /proc ", " " + root + " "));
        return this;
    }

    FakeProc file(String relative, String content) {
        try {
            Path p = root.resolve(relative);
            Files.createDirectories(p.getParent());
            Files.write(p, content.getBytes(StandardCharsets.ISO_8859_1));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    FakeProc delete(String relative) {
        try {
            Files.deleteIfExists(root.resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    FakeProc link(String relative, String target) {
        try {
            Path p = root.resolve(relative);
            Files.createDirectories(p.getParent());
            Files.deleteIfExists(p);
            Files.createSymbolicLink(p, Path.of(target));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /**
     * Deletes every symbolic link under {@code root}: an {@code exe} link points outside the
     * temporary directory, and JUnit warns when it has to delete such a link itself.
     */
    static void removeLinks(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (java.util.stream.Stream<Path> files = Files.walk(root)) {
            for (Path p : files.filter(Files::isSymbolicLink).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    LinuxProcessIntrospector introspector(PidPresence presence) {
        return new LinuxProcessIntrospector(root.toString(), machineRoot(), presence, null);
    }

    /** An introspector that tells {@code opened} each file it opens or link it reads. */
    LinuxProcessIntrospector introspector(PidPresence presence, java.util.function.Consumer<String> opened) {
        return new LinuxProcessIntrospector(root.toString(), machineRoot(), presence, opened);
    }
}
