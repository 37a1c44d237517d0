/**
 * The lease engine: {@code LeaseRules} (pure: a record, the facts, a policy in; a decision out),
 * {@code LeaseKeeper}, which gathers the facts a decision needs (verdicts, a scan for a token's
 * carriers) and writes what was decided, {@code Grants}, the one writer of what happens to a grant
 * once made, {@code TokenCarriers}, {@code Spawner} and {@code HolderKeeper}. It imports the API's
 * values, the book seam, {@code dev.proclive} and {@code spi}; never a book and never the
 * platform switch, so whichever book holds the records is judged by the same code.
 */
package dev.proclive.lease.core;
