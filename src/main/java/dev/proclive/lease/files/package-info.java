/**
 * A book in a directory: {@code NAME.lease} replaced atomically, {@code NAME.guard} locked across processes (through
 * the {@link dev.proclive.spi.internal.FileLocker} its builder hands in) and holding the highest fence, temporary files
 * named after their writer. Plain file I/O; no JNA, no engine.
 */
package dev.proclive.lease.files;
