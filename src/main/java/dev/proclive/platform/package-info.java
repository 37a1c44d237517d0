/**
 * The one platform switch: reads {@code os.name} (here and nowhere else) and picks the
 * implementations of the SPI for this OS — the process introspector ({@code linux},
 * {@code macos}, or one that answers UNKNOWN {@code unsupported_platform}) and the lease's file
 * lock ({@code posix} {@code flock}, {@code windows} {@code LockFileEx}).
 * {@link dev.proclive.LivenessChecker#system()} and the lease store build over what it picks;
 * nothing here builds what stands above it. No JNA here. Not exported from the module.
 */
package dev.proclive.platform;
