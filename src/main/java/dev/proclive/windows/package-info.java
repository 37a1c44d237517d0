/**
 * The Windows backend's first room: the lease's lock ({@code LockFileEx}, through
 * {@code FileChannel.lock()}). Windows processes are not introspected yet. Chosen by
 * {@code dev.proclive.platform}; not exported from the module.
 */
package dev.proclive.windows;
