/**
 * proclive's API: record who a process is ({@link dev.proclive.Identity}), later ask whether that
 * exact process is still alive ({@link dev.proclive.ProcLive#check}), and find the process that
 * owns the calling one ({@link dev.proclive.OwnerResolver}).
 *
 * <p>Verdicts are {@link dev.proclive.Liveness#ALIVE}, {@link dev.proclive.Liveness#DEAD} or
 * {@link dev.proclive.Liveness#UNKNOWN}, each with a {@link dev.proclive.Reason}; the precedence is
 * in {@link dev.proclive.LivenessChecker}. Nothing in this package touches the OS, loads native
 * code or reads {@code os.name}: that is behind {@link dev.proclive.spi.ProcessIntrospector},
 * picked by {@code dev.proclive.platform}. {@link dev.proclive.ProcLive}
 * is the entry point; {@link dev.proclive.LivenessChecker#of} runs the same rules over another
 * introspector.
 */
package dev.proclive;
