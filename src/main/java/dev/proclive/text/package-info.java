/**
 * How proclive writes what it found, once for the lease store and the command line: messages on
 * one line, whatever bytes they quote ({@link dev.proclive.text.OneLine}), and an identity as JSON
 * with jackson-core's streaming parser and generator ({@link dev.proclive.text.IdentityStream}),
 * and JSON read strictly: no trailing content, no field twice ({@link dev.proclive.text.StrictJson}).
 * No OS, no JNA. Not exported from the module.
 */
package dev.proclive.text;
