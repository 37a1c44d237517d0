package dev.proclive.lease.book;

import dev.proclive.lease.LeaseRecord;

/**
 * A book whose grants go away by themselves unless someone keeps them alive (etcd: each record is
 * attached to an etcd lease of its TTL). What a keeper of other processes' grants needs besides
 * the {@link LeaseBook} itself: a way to keep one alive.
 */
public interface ExpiringBook extends LeaseBook {

    /** Keeps {@code record}, attached to {@code etcdLease}, alive from now on, until it is ended or lost. */
    void keep(LeaseRecord record, long etcdLease);

    /** Whether the grant at {@code fence} of {@code name} is kept alive by this book now (not ended, not given up). */
    boolean keeping(String name, long fence);

    /**
     * The grant at {@code fence} of {@code name} is ended, or its record is no longer that grant's:
     * if it was lost, nothing of it may still write, and what the book kept for it may go (until
     * then a lost grant's record is never freed by this book).
     */
    void ended(String name, long fence);
}
