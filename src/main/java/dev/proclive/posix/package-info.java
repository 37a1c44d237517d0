/**
 * What Linux and macOS share, through JNA: the C library's calls both backends and the command
 * line need ({@code kill(2)} to pass a signal on). JNA loads on first use, with the C library
 * named as the platform names it (so JNA looks for nothing). Not exported from the module.
 */
package dev.proclive.posix;
