/**
 * The few calls of etcd's v3 API a lease store makes ({@link dev.proclive.etcd.Etcd}), and
 * their one transport: the JSON gateway over {@code java.net.http} ({@link
 * dev.proclive.etcd.EtcdGateway}). Knows keys, revisions and etcd leases, nothing of
 * proclive's leases; no native code here.
 */
package dev.proclive.etcd;
