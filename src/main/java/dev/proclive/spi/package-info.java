/**
 * The seam a platform implements: {@link dev.proclive.spi.ProcessIntrospector} reads processes,
 * the boot id, the host name and the PID namespace, and reports "gone", "access denied" and
 * "unsupported" as distinct {@link dev.proclive.spi.ProcessLookup} outcomes.
 *
 * <p>An introspector only reads; it never judges. The verdict rules live once, in
 * {@link dev.proclive.LivenessChecker}, which takes an introspector through
 * {@link dev.proclive.LivenessChecker#of}. Nothing here touches an operating system or loads
 * native code.
 */
package dev.proclive.spi;
