/**
 * Single-writer leases whose holder is a process identity: {@link dev.proclive.lease.LeaseStore} grants a named lease
 * to a live process, lets a newcomer take it over at once when that holder is proven DEAD, never while it is ALIVE, and
 * on UNKNOWN only when the {@link dev.proclive.lease.LeasePolicy} allows it and the holder stopped renewing; every
 * grant carries a fence number that only grows, so the protected resource can refuse a stale holder's late writes.
 */
package dev.proclive.lease;
