/**
 * The few calls of etcd's v3 API a lease store makes ({@link dev.proclive.lease.etcd.v3.Etcd}), and
 * their one transport: the JSON gateway over {@code java.net.http} ({@link
 * dev.proclive.lease.etcd.v3.EtcdGateway}). Knows keys, revisions and etcd leases, nothing of
 * proclive's leases; no native code here.
 */
package dev.proclive.lease.etcd.v3;
