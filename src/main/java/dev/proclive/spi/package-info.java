/**
 * The seam a platform implements: {@link dev.proclive.spi.ProcessIntrospector} reads processes,
 * the boot id, the host name and the PID namespace, and reports "gone", "access denied" and
 * "unsupported" as distinct {@link dev.proclive.spi.ProcessLookup} outcomes.
 *
 * <p>Nothing here touches an operating system or loads native code; the verdict rules live in
 * {@link dev.proclive}.
 */
package dev.proclive.spi;
