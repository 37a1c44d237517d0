package dev.proclive.lease.book;

import dev.proclive.lease.LeaseRecord;
import java.util.Objects;
import java.util.Optional;

/**
 * A record's {@link LeaseRecord#cgroup()} and {@link LeaseRecord#cgroupId()} as one value.
 * @param path as the process that made it saw it
 * @param id   {@code "NAMESPACE:INODE"}, telling it from another cgroup at that path; empty in a
 *             record written before it was kept (then only who is inside is a proof)
 */
public record Cgroup(String path, String id) {
    public Cgroup {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(id, "id");
    }

    public static Optional<Cgroup> of(LeaseRecord r) {
        return r.cgroup().map(path -> new Cgroup(path, r.cgroupId().orElse("")));
    }
}
