/**
 * Single-writer leases whose holder is a process identity: {@link dev.proclive.lease.LeaseStore}
 * grants a named lease to a live process, lets a newcomer take it over at once when that holder is
 * proven DEAD, never while it is ALIVE, and on UNKNOWN only when the
 * {@link dev.proclive.lease.LeasePolicy} allows it and the holder stopped renewing; every grant
 * carries a fence number that only grows, so the protected resource can refuse a stale holder's
 * late writes.
 *
 * <p>This package is the API: the store (the one place that builds a book, and what closes it),
 * the values it answers with, and the exceptions. Below it, and not exported: the engine
 * ({@code lease.core}: the rules, the keeper that gathers facts and decides, the one writer of
 * records, the token carriers, the spawner), the seam it writes through ({@code lease.book}), and
 * the two books, a directory ({@code lease.files}) and etcd ({@code lease.etcd}, whose v3 calls
 * are {@code dev.proclive.etcd}, a client that knows nothing of leases). No JNA and no
 * {@code os.name} here.
 */
package dev.proclive.lease;
