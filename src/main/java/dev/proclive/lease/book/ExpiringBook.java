package dev.proclive.lease.book;

import dev.proclive.lease.LeaseRecord;
import java.io.IOException;
import java.util.List;

/**
 * A book whose grants go away by themselves unless someone keeps them alive (etcd: each record is
 * attached to an etcd lease of its TTL). What a keeper of other processes' grants needs besides
 * the {@link LeaseBook} itself: the grants there are, and a way to keep one alive.
 */
public interface ExpiringBook extends LeaseBook {

    /** A granted record and the expiring lease (etcd's) it is attached to. */
    record Grant(LeaseRecord record, long etcdLease) {
    }

    /**
     * Every granted record in the book, read at one moment; records that cannot be read (not a
     * lease's, or corrupt) are left out: a keeper keeps what it can prove is a grant.
     */
    List<Grant> grants() throws IOException;

    /** Keeps {@code record}, attached to {@code etcdLease}, alive from now on, until it is ended or lost. */
    void keep(LeaseRecord record, long etcdLease);

    /** Whether the grant at {@code fence} of {@code name} is kept alive by this book now (not ended, not given up). */
    boolean keeping(String name, long fence);
}
