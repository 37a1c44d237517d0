/**
 * What Linux and macOS share, through JNA: the lease's lock ({@code flock(2)} on a descriptor
 * opened with the {@code open(2)} flags of this OS and CPU, {@code OpenFlags}, a pure table) and
 * {@code kill(2)} to pass a signal on. JNA loads on first use, with the C library named as the
 * platform names it (so JNA looks for nothing). Chosen by {@code dev.proclive.platform}; not
 * exported from the module.
 */
package dev.proclive.posix;
