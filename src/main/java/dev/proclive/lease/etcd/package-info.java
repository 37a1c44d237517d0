/**
 * A book in etcd, through {@code dev.proclive.etcd}: records on etcd leases of their TTL, fences key revisions, each
 * write one compared transaction, one keep-alive thread a JVM that only renews (the engine ends dead holders' grants).
 */
package dev.proclive.lease.etcd;
