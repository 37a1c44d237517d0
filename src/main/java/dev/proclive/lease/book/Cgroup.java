package dev.proclive.lease.book;

import dev.proclive.lease.LeaseRecord;
import java.util.Objects;
import java.util.Optional;

/**
 * The cgroup a reservation's command runs in, as the engine handles it: the two fields a record
 * keeps ({@link LeaseRecord#cgroup()}, {@link LeaseRecord#cgroupId()}) as one value.
 *
 * @param path its directory, as the process that made it saw it
 * @param id   what tells it apart from another at that path, as {@code "NAMESPACE:INODE"}; empty for a
 *             record written before it was kept (then only who is inside is a proof)
 */
public record Cgroup(String path, String id) {
    public Cgroup {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(id, "id");
    }

    /** The cgroup {@code r} names, if it names one. */
    public static Optional<Cgroup> of(LeaseRecord r) {
        return r.cgroup().map(path -> new Cgroup(path, r.cgroupId().orElse("")));
    }
}
