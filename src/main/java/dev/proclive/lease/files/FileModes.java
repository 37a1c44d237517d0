package dev.proclive.lease.files;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * Who may open the files a store makes in its directory. Each is created owner-only, so that nobody opens it before it
 * is {@linkplain #share shared}; in a directory others may use, it is then given what the directory's classes may do
 * there, and the directory's group, so that no member is locked out.
 */
final class FileModes {

    static final Set<PosixFilePermission> OWNER_ONLY_DIRECTORY = PosixFilePermissions.fromString("rwx------");

    private final boolean posix;
    /** Of a record, queue or session file where the directory is shared (POSIX); else empty. */
    private final Optional<Set<PosixFilePermission>> shared;
    /** Of a guard in a shared directory: open to its writers alone, as only they may lock it. */
    private final Optional<Set<PosixFilePermission>> sharedGuard;
    private final boolean sticky;
    /** The shared directory's group: every file made here joins it, as in a setgid directory, to lock no member out. */
    private final Optional<GroupPrincipal> group;

    private FileModes(Optional<PosixFileAttributes> directory, boolean sticky) {
        Optional<PosixFileAttributes> sharedDirectory = directory.filter(d -> !d.permissions().stream()
                .allMatch(p -> p.name().startsWith("OWNER_")));
        this.posix = directory.isPresent();
        this.sticky = sticky;
        this.shared = sharedDirectory.map(d -> permissions(d.permissions(), sticky, true));
        this.sharedGuard = sharedDirectory.map(d -> permissions(d.permissions(), sticky, false));
        this.group = sharedDirectory.map(PosixFileAttributes::group);
    }

    /** Of the files in directory {@code dir}, a real path. */
    static FileModes of(Path dir) throws IOException {
        if (!dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            return new FileModes(Optional.empty(), false);
        }
        return new FileModes(Optional.of(Files.readAttributes(dir, PosixFileAttributes.class)), sticky(dir));
    }

    /** What a file is created with: owner-only on POSIX. */
    FileAttribute<?>[] createAs() {
        return posix ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
                "rw-------"))} : new FileAttribute<?>[0];
    }

    /** Whether the directory has the sticky bit: there only its maker may write a file ({@link #permissions}). */
    boolean sticky() {
        return sticky;
    }

    /** Whether guards are shared: the directory is, on POSIX. */
    boolean guardsShared() {
        return sharedGuard.isPresent();
    }

    /**
     * A class that may write {@code d} (write and search) reads and writes; one that may only search it reads when
     * {@code readers} ({@code read} and {@code show} need no write access), else nothing (the guard). In a
     * {@code sticky} directory no user may replace another's file, so none can pass a lease on: there a class that may
     * write the directory only reads, else it could forge a record or a guard in place.
     */
    private static Set<PosixFilePermission> permissions(Set<PosixFilePermission> d, boolean sticky, boolean readers) {
        Set<PosixFilePermission> p = EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        if (!sticky && d.contains(PosixFilePermission.GROUP_WRITE) && d.contains(PosixFilePermission.GROUP_EXECUTE)) {
            p.add(PosixFilePermission.GROUP_READ);
            p.add(PosixFilePermission.GROUP_WRITE);
        } else if (readers && d.contains(PosixFilePermission.GROUP_EXECUTE)) {
            p.add(PosixFilePermission.GROUP_READ);
        }
        if (!sticky && d.contains(PosixFilePermission.OTHERS_WRITE) && d.contains(PosixFilePermission.OTHERS_EXECUTE)) {
            p.add(PosixFilePermission.OTHERS_READ);
            p.add(PosixFilePermission.OTHERS_WRITE);
        } else if (readers && d.contains(PosixFilePermission.OTHERS_EXECUTE)) {
            p.add(PosixFilePermission.OTHERS_READ);
        }
        return p;
    }

    /** Whether {@code dir} has the sticky bit ({@code /tmp}); false with no {@code unix} view (not Linux or macOS). */
    private static boolean sticky(Path dir) {
        try {
            return (((Integer) Files.getAttribute(dir, "unix:mode")) & 01000) != 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return false;
        }
    }

    /**
     * Whether a shared guard's permissions let in a class they should not, or its group is another: someone may then
     * hold it open, and so its lock, whatever its permissions become. False where guards are not shared.
     */
    boolean exposed(PosixFileAttributes a) {
        if (sharedGuard.isEmpty()) {
            return false;
        }
        Set<PosixFilePermission> allowed = sharedGuard.get();
        boolean otherGroup = group.filter(g -> !g.equals(a.group())).isPresent();
        for (PosixFilePermission p : a.permissions()) {
            boolean groups = p == PosixFilePermission.GROUP_READ || p == PosixFilePermission.GROUP_WRITE;
            boolean others = p == PosixFilePermission.OTHERS_READ || p == PosixFilePermission.OTHERS_WRITE;
            if ((groups && (otherGroup || !allowed.contains(p))) || (others && !allowed.contains(p))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Gives a shared guard, a regular file not {@linkplain #exposed exposed}, the group and permissions it lacks (one
     * made before the directory was shared); another user's is left, as only its owner may. {@code options}: none where
     * {@code guard} is the locked descriptor's path, a link to its file.
     */
    void shareGuard(Path guard, PosixFileAttributes a, LinkOption... options) {
        if (sharedGuard.isEmpty() || exposed(a)
                || group.filter(g -> !g.equals(a.group())).isEmpty() && a.permissions().equals(sharedGuard.get())) {
            return;
        }
        try {
            share(guard, true, options);
        } catch (IOException notOurs) {
            // another user's: only its owner can change it
        }
    }

    /**
     * Gives a file made here what it should have where the directory is shared, a {@code guard}'s or another's: the
     * group first, so what a group gets is never its maker's group's; whatever the umask took is given back.
     */
    void share(Path file, boolean guard) throws IOException {
        share(file, guard, LinkOption.NOFOLLOW_LINKS);
    }

    private void share(Path file, boolean guard, LinkOption... options) throws IOException {
        Optional<Set<PosixFilePermission>> permissions = guard ? sharedGuard : shared;
        if (permissions.isEmpty()) {
            return;
        }
        if (group.isPresent()) {
            try {
                Files.getFileAttributeView(file, PosixFileAttributeView.class, options).setGroup(group.get());
            } catch (IOException notAMember) {
                // only the owner, a member of that group, or root may give it
            }
        }
        Files.setPosixFilePermissions(file, permissions.get());
    }
}
