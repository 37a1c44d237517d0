/**
 * The command line, {@code java -jar proclive-cli.jar}: {@code owner}, {@code identify},
 * {@code check}, {@code demo}. Not API; it uses only the public {@link dev.proclive} types.
 */
package dev.proclive.cli;
