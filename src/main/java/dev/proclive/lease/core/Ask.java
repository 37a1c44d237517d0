package dev.proclive.lease.core;

import dev.proclive.lease.Acquisition;
import java.io.IOException;

/** What a wait asks again, in order, while the lease is held or undecided. */
@FunctionalInterface
public interface Ask {
    Acquisition get() throws IOException;
}
