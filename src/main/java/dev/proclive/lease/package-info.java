/**
 * Single-writer leases whose holder is a process identity: {@link dev.proclive.lease.LeaseStore}
 * grants a named lease to a live process, lets a newcomer take it over at once when that holder is
 * proven DEAD, never while it is ALIVE, and on UNKNOWN only when the
 * {@link dev.proclive.lease.LeasePolicy} allows it and the holder stopped renewing; every grant
 * carries a fence number that only grows, so the protected resource can refuse a stale holder's
 * late writes.
 *
 * <p>The records live in a directory ({@code LeaseStore.open}) or in etcd ({@code LeaseStore.etcd}),
 * behind one seam, {@code LeaseBook}: the keeper decides by {@code LeaseRules} whichever holds
 * them. A directory is plain file I/O, its cross-process lock on a guard file the platform's
 * {@link dev.proclive.spi.FileLocker}, picked by {@code dev.proclive.platform}; etcd is reached
 * through {@code dev.proclive.lease.etcd}. No JNA and no {@code os.name} here.
 */
package dev.proclive.lease;
