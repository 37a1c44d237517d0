/**
 * The seams a platform implements: {@link dev.proclive.spi.ProcessIntrospector} reads processes,
 * the boot id, the host name, the machine id and the PID namespace, and reports "gone", "access
 * denied" and "unsupported" as distinct {@link dev.proclive.spi.ProcessLookup} outcomes. What
 * only this library's own backends read besides (environments, exit events, a spawned command's
 * descendants, the lease's lock) is inside the module, in {@code dev.proclive.spi.internal}: a
 * platform plugged in here gets its defaults (scans incomplete, watches that poll).
 *
 * <p>An introspector only reads; it never judges. The verdict rules live once, in
 * {@link dev.proclive.LivenessChecker}, which takes an introspector through
 * {@link dev.proclive.LivenessChecker#of}. Nothing here touches an operating system or loads
 * native code.
 */
package dev.proclive.spi;

import dev.proclive.spi.internal.EnvironmentScan;
import dev.proclive.spi.internal.ExitEvents;
import dev.proclive.spi.internal.FileLocker;
