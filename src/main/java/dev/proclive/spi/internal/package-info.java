/**
 * The seams this library's own backends fill beyond one process's facts, inside the module and not
 * exported: {@link dev.proclive.spi.internal.KernelIntrospector} (program names, other processes'
 * environments as {@link dev.proclive.spi.internal.EnvironmentScan}s, exit events as
 * {@link dev.proclive.spi.internal.ExitEvents}), what the kernel tracks of a spawned command's
 * descendants ({@link dev.proclive.spi.internal.Descendants}), and the lease's lock
 * ({@link dev.proclive.spi.internal.FileLocker}). Nothing here touches an operating system or
 * loads native code.
 */
package dev.proclive.spi.internal;
