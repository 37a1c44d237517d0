/**
 * The seams a platform implements: {@link dev.proclive.spi.ProcessIntrospector} reads processes,
 * the boot id, the host name, the machine id and the PID namespace, and reports "gone", "access
 * denied" and "unsupported" as distinct {@link dev.proclive.spi.ProcessLookup} outcomes; it scans
 * environments ({@link dev.proclive.spi.EnvironmentScan}) and opens exit events
 * ({@link dev.proclive.spi.ExitEvents}); {@link dev.proclive.spi.FileLocker} is the lease's lock.
 *
 * <p>An introspector only reads; it never judges. The verdict rules live once, in
 * {@link dev.proclive.LivenessChecker}, which takes an introspector through
 * {@link dev.proclive.LivenessChecker#of}. Nothing here touches an operating system or loads
 * native code.
 */
package dev.proclive.spi;
