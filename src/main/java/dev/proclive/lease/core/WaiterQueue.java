package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.lease.book.LeaseBook;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The processes waiting for each lease, served in the order they came: a ticket per waiter in the
 * book ({@link LeaseBook.Guard#waiters}), written under the lease's lock. A new grant goes to the
 * longest-waiting live waiter; tickets past their time, and of DEAD processes, are dropped, so a
 * waiter that died or gave up never holds the others up. Where the book keeps no queue (etcd),
 * nothing is queued.
 */
final class WaiterQueue {

    private final LeaseBook book;
    private final LivenessChecker checker;

    WaiterQueue(LeaseBook book, LivenessChecker checker) {
        this.book = book;
        this.checker = checker;
    }

    /** Puts {@code who} at the end of lease {@code name}'s queue (once), until {@code until}. */
    void enqueue(String name, Identity who, Instant until) throws IOException {
        book.locked(name, guard -> {
            List<LeaseBook.Waiter> queue = new ArrayList<>(guard.waiters());
            if (queue.stream().noneMatch(w -> LeaseRules.sameProcess(w.who(), who))) {
                queue.add(new LeaseBook.Waiter(who, until));
                guard.waiters(queue);
            }
            return null;
        });
    }

    /** Takes {@code who} out of lease {@code name}'s queue. */
    void dequeue(String name, Identity who) {
        try {
            book.locked(name, guard -> {
                List<LeaseBook.Waiter> queue = new ArrayList<>(guard.waiters());
                if (queue.removeIf(w -> LeaseRules.sameProcess(w.who(), who))) {
                    guard.waiters(queue);
                }
                return null;
            });
        } catch (IOException | RuntimeException e) {
            // its ticket lapses at its deadline, or when its process is DEAD
        }
    }

    /**
     * The waiter a new grant for {@code who} waits behind: the first live one in the queue that is
     * not {@code who}. {@code who}'s own ticket stays (its waiter takes it out once it is answered:
     * a book that writes again after a conflict must find it again). Under the lease's lock.
     */
    Optional<LeaseBook.Waiter> ahead(LeaseBook.Guard guard, Identity who, Optional<dev.proclive.lease.LeaseRecord> current,
                                     Instant now) throws IOException {
        List<LeaseBook.Waiter> queue = new ArrayList<>(guard.waiters());
        if (queue.isEmpty()) {
            return Optional.empty();
        }
        int before = queue.size();
        // A ticket lapses at its deadline, when its process is DEAD, or once it was granted (its
        // waiter takes it out then; should that fail, the lease's holder does not wait for it).
        queue.removeIf(w -> now.isAfter(w.until()) || checker.explain(w.who()).liveness() == Liveness.DEAD
                || current.map(r -> LeaseRules.sameProcess(r.holder(), w.who())).orElse(false));
        Optional<LeaseBook.Waiter> first = queue.isEmpty() ? Optional.empty() : Optional.of(queue.get(0));
        if (first.isPresent() && LeaseRules.sameProcess(first.get().who(), who)) {
            first = Optional.empty();
        }
        if (queue.size() != before) {
            guard.waiters(queue);
        }
        return first;
    }
}
