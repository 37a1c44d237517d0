/**
 * A book in a directory: {@code NAME.lease} replaced atomically, {@code NAME.guard} locked across processes and holding
 * the highest fence, temporary files named after their writer. Plain file I/O: no JNA, no engine.
 */
package dev.proclive.lease.files;
