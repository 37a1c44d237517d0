/**
 * proclive: is the process that owns this still alive — that exact process, not whatever now has
 * its PID? The API is {@link dev.proclive.ProcLive} and the types beside it; the seam a platform
 * implements is {@code dev.proclive.spi}. The per-OS backends and the command line are inside the
 * module and not exported.
 */
module dev.proclive {
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.databind;
    // JNA: the macOS backend, and on Linux only the kill(2) fallback under hidepid; both degrade
    // to UNKNOWN when it cannot load. Automatic modules: JNA ships no module descriptor.
    requires com.sun.jna;
    requires com.sun.jna.platform;
    // sun.misc.Signal: lease run passes SIGTERM, SIGINT and SIGHUP on to its command.
    requires jdk.unsupported;

    exports dev.proclive;
    exports dev.proclive.spi;
    exports dev.proclive.lease;

    // Jackson reads and writes Identity (and, through it, callers' records) by reflection.
    opens dev.proclive to com.fasterxml.jackson.databind;
}
