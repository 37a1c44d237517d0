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
     * The store records the command's end; this process stays until it is written (the lease's
     * {@link Lease#lost()} completes then), at most 30 s. One told only "unconfirmed" (a stalled
     * member) may still have its end written: it stays while the record shows the grant. A
     * reservation still this process's (its hand-off failed and the command never claimed it) has
     * no end to write: the next newcomer proves the command gone, and this process does not wait.
     */
    static void awaitRecorded(LeaseStore store, Lease lease, PrintStream err) {
        if (ownReservation(store, lease)) {
            return;
        }
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            LeaseLost lost = lease.lost().get(30, TimeUnit.SECONDS);
            while (lost.why() == LeaseLost.Why.UNCONFIRMED && System.nanoTime() < until && stillGranted(store, lease)) {
                Thread.sleep(50); // unconfirmed: no proof the grant is gone; look at the record again
            }
        } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException | IOException e) {
            Say.line(err, NOT_YET);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether the record is {@code lease}'s reservation, still this process's; not when it cannot be read. */
    private static boolean ownReservation(LeaseStore store, Lease lease) {
        try {
            return store.read(lease.name()).map(r -> r.fence() == lease.fence() && r.state() == LeaseRecord.State.RESERVED
                    && r.holder().pid() == ProcessHandle.current().pid()).orElse(false);
        } catch (IOException e) {
            return false; // wait as for any command: its end may still be written
        }
    }

    /** Whether the record still shows {@code lease}'s grant, its end not yet written. */
    private static boolean stillGranted(LeaseStore store, Lease lease) throws IOException {
        return store.read(lease.name()).map(r -> r.granted() && r.fence() == lease.fence()
                && r.holder().pid() == lease.holder().pid()).orElse(false);
    }
}
