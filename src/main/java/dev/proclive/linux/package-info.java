/**
 * The Linux backend: {@code /proc} read with plain file I/O. JNA appears in two classes, each
 * loaded only when it is needed: {@code Kill}, the fallback that asks {@code kill(pid, 0)} when
 * {@code hidepid} hides a process, and {@code PidfdEvents}, the exit watch's
 * {@code pidfd_open(2)} and {@code epoll}. Chosen by {@code dev.proclive.platform}; not exported
 * from the module and not in the javadoc: reach it through {@code dev.proclive.ProcLive}.
 */
package dev.proclive.linux;
