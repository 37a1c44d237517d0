/**
 * The lease engine: {@code LeaseRules} (pure decisions), {@code LeaseEngine}, the one writer of decisions and of each
 * grant's life, and its parts ({@code TokenCarriers}, {@code Waiting}, {@code Spawner}, {@code KeptGrants},
 * {@code RecordWatches}, {@code HolderKeeper}, {@code WaiterQueue}), knowing it only as {@code LeaseLife}: nothing
 * imports upwards. It imports no book nor the platform switch: every book's records are judged by the same code.
 */
package dev.proclive.lease.core;
