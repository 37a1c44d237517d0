/**
 * The seam between the lease engine and where records live: {@code LeaseBook} (read, one writer at a time through a
 * guard, a change to wait for; whether its grants expire unless kept alive, and keeping them), the record's JSON codec
 * and the names every layer agrees on (the lease name rule, the variables a spawned process finds its reservation in).
 * It imports the API's values and {@code dev.proclive.text}; never the engine, a book or the liveness checker.
 */
package dev.proclive.lease.book;
