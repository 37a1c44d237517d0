/**
 * The lease engine: {@code LeaseRules} (pure: a record, the facts, a policy in; a decision out),
 * {@code LeaseKeeper}, the store's entry, which locks, waits and spawns, {@code Grants}, which
 * gathers the facts a decision needs (verdicts, a scan for a token's carriers) and is the one
 * writer of what was decided and of what happens to a grant once made, {@code TokenCarriers},
 * {@code Spawner} and {@code HolderKeeper}. It imports the API's
 * values, the book seam, {@code dev.proclive} and {@code spi}; never a book and never the
 * platform switch, so whichever book holds the records is judged by the same code.
 */
package dev.proclive.lease.core;
