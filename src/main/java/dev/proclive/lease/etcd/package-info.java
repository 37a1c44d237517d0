/**
 * A book in etcd: each record attached to an etcd lease of its TTL, the fence a key's {@code mod_revision}, every write
 * one compared transaction, and the one keep-alive thread of a JVM, which renews and nothing else (a grant whose holder
 * dies is ended by the engine). It speaks to etcd through {@code dev.proclive.etcd}.
 */
package dev.proclive.lease.etcd;
