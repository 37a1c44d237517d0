/**
 * The macOS backend: {@code sysctl(kern.proc.pid)} through JNA into a {@code kinfo_proc}, decoded
 * by a pure function ({@code KinfoProc}) so the decoding is tested on every OS; the exit watch's
 * {@code kqueue} and the hardware UUID through JNA too. Chosen by {@code dev.proclive.platform};
 * not exported from the module.
 */
package dev.proclive.macos;
