/**
 * The command line, {@code proclive} ({@code java -jar proclive-cli.jar}): {@code owner},
 * {@code identify}, {@code check}, {@code wait}, {@code lease}, {@code demo}. Not API. {@code Main}
 * dispatches; the commands call down to shared helpers (one stderr writer, one PID parser, one
 * seconds parser), never back up into {@code Main}. {@code lease}: {@code LeaseCommand} parses the
 * whole command line before anything is touched and hands it to its action, one object each in
 * {@code LeaseActions}, which never calls back into the parser ({@code ArchitectureTest} holds both
 * rules). No JNA and no {@code os.name} here.
 */
package dev.proclive.cli;
