package dev.proclive.bench;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseStore;
import java.nio.file.Path;

/**
 * One of the processes of the contention benchmark: for {@code SECONDS}, acquires lease
 * {@code contended} for itself, releases it when granted, and prints how many grants it got.
 */
public final class LeaseContention {

    private LeaseContention() {
    }

    public static void main(String[] args) throws Exception {
        LeaseStore store = LeaseStore.open(Path.of(args[0]));
        Identity self = ProcLive.current().orElseThrow();
        long end = System.nanoTime() + (long) (Double.parseDouble(args[1]) * 1e9);
        long grants = 0;
        long attempts = 0;
        while (System.nanoTime() < end) {
            attempts++;
            if (store.acquire("contended", self) instanceof Acquisition.Granted g) {
                grants++;
                g.lease().release();
            } else {
                Thread.onSpinWait();
            }
        }
        System.out.println(grants + " " + attempts);
    }
}
