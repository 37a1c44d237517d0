/**
 * proclive: is the process that owns this still alive — that exact process, not whatever now has
 * its PID? The API is {@link dev.proclive.ProcLive} and the types beside it; the seam a platform
 * implements is {@code dev.proclive.spi}. The per-OS backends and the command line are inside the
 * module and not exported.
 */
module dev.proclive {
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.databind;
    // JNA: the macOS backend; on Linux the kill(2) fallback under hidepid, the exit watch's pidfds;
    // the lease's flock, and kill(2) to pass a signal on (posix). Optional, as on the class path: without it checks degrade to UNKNOWN
    // where they needed it, watches poll, and leases fail with an I/O error. Automatic modules (JNA
    // ships no module descriptor), so an application that wants them resolved requires them or
    // passes --add-modules com.sun.jna,com.sun.jna.platform.
    requires static com.sun.jna;
    requires static com.sun.jna.platform;
    // sun.misc.Signal: lease run passes the signals it gets on to its command.
    requires jdk.unsupported;
    // java.net.http: a lease store on etcd talks to etcd's JSON gateway.
    requires java.net.http;

    exports dev.proclive;
    exports dev.proclive.spi;
    exports dev.proclive.lease;

    // Jackson reads and writes Identity (and, through it, callers' records) by reflection.
    opens dev.proclive to com.fasterxml.jackson.databind;
}
