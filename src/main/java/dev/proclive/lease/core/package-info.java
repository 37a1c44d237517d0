/**
 * The lease engine: {@code LeaseRules} (pure: a record, the facts, a policy in; a decision out), {@code LeaseEngine},
 * the store's entry and the one writer of what was decided and of what happens to a grant once made (it locks, gathers
 * the facts a decision needs, waits, spawns, renews, hands off and ends), and what it keeps grants and waiters with:
 * {@code TokenCarriers}, {@code Waiting}, {@code Spawner}, {@code KeptGrants}, {@code RecordWatches},
 * {@code HolderKeeper}, {@code WaiterQueue}. Those parts know the engine only as {@code LeaseLife}, the writes it makes
 * for them, so nothing here imports upwards. It imports the API's values, the book seam, {@code dev.proclive} and
 * {@code spi}; never a book and never the platform switch, so every book's records are judged by the same code.
 */
package dev.proclive.lease.core;
