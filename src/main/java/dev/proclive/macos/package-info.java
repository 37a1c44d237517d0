/**
 * The macOS backend: {@code sysctl(kern.proc.pid)} through JNA into a {@code kinfo_proc}, decoded
 * by a pure function ({@code KinfoProc}) so the decoding is tested on every OS.
 */
package dev.proclive.macos;
