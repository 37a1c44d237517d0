package dev.proclive.cli;

import dev.proclive.lease.Lease;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.LeaseStore;
import java.io.IOException;
import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

/** How {@code lease run} waits, after its command exited, for the store to record that end. */
final class CommandEnd {

    private static final String NOT_YET = "warning: the command's end is not recorded yet (its holder is gone, so the"
            + " next newcomer takes it)";

    private CommandEnd() {
    }

    /**
     * The store records the command's end; this process stays until it is written, at most 30 s,
     * while the record still shows the grant. A lost lease is said when its end is known; one told
     * only "unconfirmed" (a stalled member) may still have its end written. A reservation that is
     * still this process's (its hand-off failed and the command never claimed it) has no end to
     * write: the next newcomer proves the command gone.
     */
    static void awaitRecorded(LeaseStore store, Lease lease, PrintStream err) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try {
            while (stillGranted(store, lease)) {
                if (System.nanoTime() >= until) {
                    Say.line(err, NOT_YET);
                    return;
                }
                try {
                    if (lease.lost().get(250, TimeUnit.MILLISECONDS).why() != LeaseLost.Why.UNCONFIRMED) {
                        return;
                    }
                    Thread.sleep(50); // unconfirmed: no proof the grant is gone; look at the record again
                } catch (java.util.concurrent.TimeoutException notYet) {
                    // look at the record again
                }
            }
        } catch (java.util.concurrent.ExecutionException | IOException e) {
            Say.line(err, NOT_YET);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the record still shows {@code lease}'s grant, its end not yet written, and someone to write it. */
    private static boolean stillGranted(LeaseStore store, Lease lease) throws IOException {
        return store.read(lease.name()).map(r -> r.granted() && r.fence() == lease.fence()
                && !(r.state() == LeaseRecord.State.RESERVED
                        && r.holder().pid() == ProcessHandle.current().pid())).orElse(false);
    }
}
