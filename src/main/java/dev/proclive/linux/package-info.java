/**
 * The Linux backend: {@code /proc} read with plain file I/O. No JNA here except {@code Kill},
 * the one fallback that asks {@code kill(pid, 0)} when {@code hidepid} hides a process, loaded
 * only then. Not exported from the module and not in the javadoc: reach it through
 * {@code dev.proclive.ProcLive}.
 */
package dev.proclive.linux;
