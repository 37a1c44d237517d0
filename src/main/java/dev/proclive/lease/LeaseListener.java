package dev.proclive.lease;

/**
 * Told each change of a watched lease ({@link LeaseStore#watch}), one event at a time, on the store's one event thread:
 * keep it short, and hand long work to a thread of your own. What it throws, an {@code Error} too, is caught and
 * dropped: it is told every later event all the same, and so is every other listener.
 */
@FunctionalInterface
public interface LeaseListener {

    /** One change of the lease's record. */
    void changed(LeaseEvent event);
}
