package dev.proclive.lease.core;

import dev.proclive.Liveness;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.ExpiringBook;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What {@code proclive lease keep} runs ({@code LeaseStore.keepHolders}): every {@code poll}, the
 * granted records under an etcd store's prefix; those whose holder is ALIVE here are kept alive
 * and watched, and ended the moment the holder dies; those whose holder is DEAD here are ended at
 * once. Another machine's holders are that machine's keeper's.
 */
final class HolderKeeper {

    private final LeaseKeeper keeper;
    private final ExpiringBook etcd;
    /** The grants watched now, as {@code NAME@FENCE}. */
    private final Set<String> watched = ConcurrentHashMap.newKeySet();

    HolderKeeper(LeaseKeeper keeper, ExpiringBook etcd) {
        this.keeper = keeper;
        this.etcd = etcd;
    }

    /** Keeps until interrupted. */
    void run(Duration poll) throws IOException, InterruptedException {
        while (true) {
            for (ExpiringBook.Grant g : etcd.grants()) {
                LeaseRecord r = g.record();
                String key = r.name() + "@" + r.fence();
                if (watched.contains(key)) {
                    continue;
                }
                Verdict now = keeper.explain(r.holder());
                if (now.liveness() == Liveness.DEAD) {
                    // Proven here: ended now, as a newcomer here would take it over, so that nobody
                    // elsewhere waits out a TTL that another grant on the same etcd lease keeps renewing.
                    keeper.grants().end(r.name(), r.fence(), Optional.of(r.holder()), LeaseRecord.Ending.How.EXITED,
                            OptionalLong.empty(), Optional.of(now));
                    continue;
                }
                if (now.liveness() != Liveness.ALIVE) {
                    continue; // another machine's, or not to be judged from here: its own keeper's
                }
                watched.add(key);
                etcd.keep(r, g.etcdLease());
                keeper.onExit(r.holder()).thenAccept(end -> {
                    try {
                        keeper.grants().end(r.name(), r.fence(), Optional.of(r.holder()), LeaseRecord.Ending.How.EXITED,
                                OptionalLong.empty(), Optional.of(end));
                    } catch (IOException | RuntimeException e) {
                        // its keep-alive stopped with its holder: it expires by itself
                    } finally {
                        watched.remove(key);
                    }
                });
            }
            Thread.sleep(Math.max(1, poll.toMillis()));
        }
    }
}
