/**
 * How proclive's messages quote what they found, once for the lease store and the command line:
 * on one line, whatever bytes it held. No OS, no JNA. Not exported from the module.
 */
package dev.proclive.text;
