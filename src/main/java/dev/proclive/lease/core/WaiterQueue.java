package dev.proclive.lease.core;

import dev.proclive.lease.book.Records;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.spi.internal.Elapsed;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Each lease's waiters, served in the order they came: one ticket each ({@link LeaseBook.Guard#waiters}), under the
 * lease's lock. Those past their time or of a DEAD waiter or holder-to-be are dropped: one killed -9 holds nobody up.
 */
final class WaiterQueue {

    /** How long taking a ticket out waits for the lock: a ticket left behind lapses with its waiter. */
    private static final Duration DEQUEUE_LOCK = Duration.ofMillis(250);
    private static final Duration CLOSE_LOCKS = Duration.ofSeconds(2);
    /** How far ahead a directory ticket is set, again as its waiter waits: a stopped one (^Z) lapses after it. */
    static final Duration TICKET_LIFE = Duration.ofSeconds(10);
    /** How long a ticket dated past {@link #TICKET_LIFE} (clock ahead) is believed unchanged: a waiter rewrites it. */
    private static final long UNCHANGED_NANOS = TICKET_LIFE.plusSeconds(5).toNanos();
    /** Waits of this JVM per ticket: stores over one directory or prefix write as one process, so share tickets. */
    private static final Map<Ticket, Integer> WAITS = new ConcurrentHashMap<>();

    private final LeaseBook book;
    private final LivenessChecker checker;
    /** The process that waits: this store's. */
    private final Identity waiter;
    /** Of {@link #WAITS}, this store's: its close takes them out. */
    private final Map<Ticket, Integer> placed = new ConcurrentHashMap<>();
    /** Failed take-outs (etcd unanswered): left, one holds its queue while any wait here keeps their etcd lease. */
    private static final Set<Ticket> STRANDED = ConcurrentHashMap.newKeySet();
    private static final long STRANDED_RETRY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);
    private volatile long strandedTriedAt = System.nanoTime();
    /** {@link LeaseBook#place}, read at the first wait (etcd names it once answered), kept: counts are keyed by it. */
    private volatile String store;
    private volatile boolean closed;
    /** Tickets of a clock ahead, with when this store first read each as it is ({@link System#nanoTime()}). */
    private final Map<Unchanged, Long> aheadSince = new ConcurrentHashMap<>();

    private record Ticket(String store, String name, Identity who) {
    }

    private record Unchanged(String name, LeaseBook.Waiter ticket) {
    }

    WaiterQueue(LeaseBook book, LivenessChecker checker, Identity waiter) {
        this.book = book;
        this.checker = checker;
        this.waiter = waiter;
    }

    /** Queues {@code who} once, until {@code until}; in a directory for {@link #TICKET_LIFE} at most, then renewed. */
    void enqueue(String name, Identity who, Instant now, Instant until, Duration lock) throws IOException {
        retryStranded();
        Ticket ticket = new Ticket(store(), name, who);
        place(ticket); // before the lock: a close either finds it or is seen under the lock
        try {
            rewrite(name, lock, queue -> {
                if (closed) {
                    throw new IllegalStateException("the lease store is closed: nothing waits for lease " + name + " through it");
                }
                LeaseBook.Waiter mine = new LeaseBook.Waiter(who, waiter, lapsing(now, until));
                int i = indexOf(queue, who);
                if (i < 0) {
                    return queue.add(mine);
                }
                if (queue.get(i).until().isBefore(mine.until())) { // one ticket a holder-to-be and process: shared
                    queue.set(i, mine); // kept as long as the longest wait that shares it, in its place
                    return true;
                }
                return false;
            });
        } catch (IOException e) {
            unplace(ticket, false); // an interrupt or a lost answer may come after the write: this one's goes
            takeOutAsWaitEnds(name, ticket);
            throw e;
        } catch (RuntimeException | Error e) { // an Error too: a count left would be the JVM's for good
            unplace(ticket, false);
            throw e;
        }
    }

    private String store() {
        String s = store;
        if (s == null) {
            s = book.place();
            store = s;
        }
        return s;
    }

    private Instant lapsing(Instant now, Instant until) {
        Instant soon = now.plus(TICKET_LIFE);
        return book.expires() || until.isBefore(soon) ? until : soon;
    }

    /**
     * In a directory, once half of {@link #TICKET_LIFE} has passed, moves {@code who}'s ticket that far ahead again
     * ({@code until} at most); one lapsed meanwhile rejoins at the end. Nothing where tickets lapse by themselves.
     */
    void stillWaiting(String name, Identity who, Instant now, Instant until, Duration lock) throws IOException {
        retryStranded();
        if (book.expires()) {
            return;
        }
        Instant renewAfter = now.plus(TICKET_LIFE.dividedBy(2));
        rewrite(name, lock, queue -> {
            int i = indexOf(queue, who);
            if (i < 0) {
                return !closed && queue.add(new LeaseBook.Waiter(who, waiter, lapsing(now, until)));
            }
            if (queue.get(i).until().isAfter(renewAfter) || !queue.get(i).until().isBefore(until)) {
                return false; // not due
            }
            queue.set(i, new LeaseBook.Waiter(who, waiter, lapsing(now, until)));
            return true;
        });
    }

    /** Index of this process's ticket for {@code who}, or -1: each waiting process has its own ticket and place. */
    private int indexOf(List<LeaseBook.Waiter> queue, Identity who) {
        for (int i = 0; i < queue.size(); i++) {
            if (Records.sameProcess(queue.get(i).who(), who) && Records.sameProcess(queue.get(i).by(), waiter)) {
                return i;
            }
        }
        return -1;
    }

    /** The ticket goes once the last wait of this JVM for it ends: two waits for one holder-to-be share it. */
    void dequeue(String name, Identity who) {
        Ticket ticket = new Ticket(store(), name, who);
        unplace(ticket, false);
        takeOutAsWaitEnds(name, ticket);
    }

    /**
     * Takes out the ticket unless another wait here counts it again (seen under the lock, which its enqueue takes after
     * counting). Interrupt cleared: an interrupted thread tries no lock or etcd call, and an etcd ticket does not lapse
     * while another wait keeps the ticket lease alive. Retried once if interrupted: the connection may have closed.
     */
    private void takeOutAsWaitEnds(String name, Ticket ticket) {
        boolean interrupted = Thread.interrupted();
        try {
            if (!takeOut(name, DEQUEUE_LOCK, whose(ticket))
                    && !(interrupted && takeOut(name, DEQUEUE_LOCK, whose(ticket)))) {
                STRANDED.add(ticket);
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** This process's ticket for {@code ticket}'s holder-to-be, unless a wait of this JVM counts it (again). */
    private Predicate<LeaseBook.Waiter> whose(Ticket ticket) {
        return w -> !WAITS.containsKey(ticket) && Records.sameProcess(w.who(), ticket.who())
                && Records.sameProcess(w.by(), waiter);
    }

    private void retryStranded() {
        long now = System.nanoTime();
        if (STRANDED.isEmpty() || now - strandedTriedAt < STRANDED_RETRY_NANOS) {
            return;
        }
        strandedTriedAt = now;
        takeOutStranded();
    }

    /** This store's stranded tickets, taken out; one counted again is left to the wait that counts it. */
    private void takeOutStranded() {
        for (Ticket t : List.copyOf(STRANDED)) {
            if (t.store().equals(store()) && (WAITS.containsKey(t) || takeOut(t.name(), DEQUEUE_LOCK, whose(t)))) {
                STRANDED.remove(t);
            }
        }
    }

    private void place(Ticket ticket) {
        synchronized (WAITS) {
            placed.merge(ticket, 1, Integer::sum);
            WAITS.merge(ticket, 1, Integer::sum);
        }
    }

    /** {@code all}: every wait of this store on it (its close); a count this store no longer holds is not another's. */
    private void unplace(Ticket ticket, boolean all) {
        synchronized (WAITS) {
            Integer mine = placed.get(ticket);
            if (mine == null) {
                return;
            }
            int gone = all ? mine : 1;
            placed.computeIfPresent(ticket, (t, waiting) -> waiting > gone ? waiting - gone : null);
            WAITS.computeIfPresent(ticket, (t, waiting) -> waiting > gone ? waiting - gone : null);
        }
    }

    /** Whether it was done: else its ticket lapses at its deadline, or when its waiting process is DEAD. */
    private boolean takeOut(String name, Duration lock, Predicate<LeaseBook.Waiter> whose) {
        try {
            rewrite(name, lock, queue -> queue.removeIf(whose));
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * In a directory, takes out this store's tickets no other store's wait counts and queues none after: a refused
     * waiter would hold later ones up to its deadline, as those left after {@link #CLOSE_LOCKS} do; etcd's lapse alone.
     */
    void close() {
        if (book.expires()) {
            List.copyOf(placed.keySet()).forEach(t -> unplace(t, true)); // its waits end: other stores take theirs out
            takeOutStranded(); // what is left, another store of the same place may try again
            return;
        }
        closed = true;
        boolean interrupted = Thread.interrupted(); // a lock is not even tried on an interrupted thread
        try {
            Elapsed bound = Elapsed.bounded(CLOSE_LOCKS);
            for (Ticket t : List.copyOf(placed.keySet())) {
                if (bound.over()) {
                    break;
                }
                unplace(t, true);
                takeOut(t.name(), bound.left(), whose(t));
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void rewrite(String name, Duration lock, Predicate<List<LeaseBook.Waiter>> changed) throws IOException {
        book.locked(name, lock, guard -> {
            List<LeaseBook.Waiter> queue = new ArrayList<>(guard.waiters());
            if (changed.test(queue)) {
                guard.waiters(queue);
            }
            return null;
        });
    }

    /** Empties the queue of the lease {@code guard} holds, lines that are no ticket too: {@code break} clears it. */
    static void clear(LeaseBook.Guard guard) throws IOException {
        try {
            guard.waiters(); // what a book writing the queue after a read of it removes
        } catch (LeaseCorruptException corrupt) {
            // something else stands where the queue should be: removed below, as break removes a corrupt record
        }
        guard.waiters(List.of());
    }

    /**
     * The first live waiter unless it is {@code who}, under the lease's lock; {@code who}'s ticket stays (its waiter
     * takes it out once answered; a book writing again must find it). In a directory, a waiter in another PID namespace
     * or host keeps its ticket but holds nobody back (nothing here sees it die; it may last its whole {@code --wait}),
     * and one dated past a ticket's life goes once read unchanged for {@link #UNCHANGED_NANOS}: its waiter stopped, and
     * would hold all up while its clock is ahead.
     */
    Optional<LeaseBook.Waiter> ahead(String name, LeaseBook.Guard guard, Identity who, Optional<LeaseRecord> current,
                                     Instant now) throws IOException {
        List<LeaseBook.Waiter> queue = new ArrayList<>(guard.waiters());
        if (queue.isEmpty()) {
            aheadSince.keySet().removeIf(u -> u.name().equals(name));
            return Optional.empty();
        }
        List<LeaseBook.Waiter> kept = new ArrayList<>(queue.size());
        Optional<LeaseBook.Waiter> first = Optional.empty();
        long nanos = System.nanoTime();
        for (LeaseBook.Waiter w : queue) {
            // also once granted: its waiter takes it out then, and should that fail, the holder does not wait for it
            if (lapsed(name, w, now) || current.map(r -> Records.sameProcess(r.holder(), w.who())).orElse(false)
                    || staleAhead(name, w, now, nanos)) {
                continue;
            }
            Reason by = checker.explain(w.by()).reason();
            if (by.liveness() == Liveness.DEAD || (!w.by().equals(w.who()) && dead(w.who()))) {
                continue;
            }
            kept.add(w);
            boolean unseen = by == Reason.OTHER_PID_NAMESPACE || by == Reason.OTHER_HOST;
            if (first.isEmpty() && (book.expires() || !unseen)) {
                first = Optional.of(w);
            }
        }
        if (first.isPresent() && Records.sameProcess(first.get().who(), who)) {
            first = Optional.empty();
        }
        if (kept.size() != queue.size()) {
            guard.waiters(kept);
        }
        aheadSince.keySet().removeIf(u -> u.name().equals(name) && !kept.contains(u.ticket()));
        return first;
    }

    /**
     * Whether {@code w}'s time is past. This process's own lapses only once no wait here counts it: a wall clock may
     * step forward under a wait timed on the monotonic one. On etcd another's lapses only with its etcd lease or its
     * waiter's death, not by its waiter's clock (one an hour behind would let every caller here jump it).
     */
    private boolean lapsed(String name, LeaseBook.Waiter w, Instant now) {
        if (Records.sameProcess(w.by(), waiter)) {
            return now.isAfter(w.until()) && !WAITS.containsKey(new Ticket(store(), name, w.who()));
        }
        return now.isAfter(w.until()) && !book.expires();
    }

    private boolean staleAhead(String name, LeaseBook.Waiter w, Instant now, long nanos) {
        if (book.expires() || !w.until().isAfter(now.plus(TICKET_LIFE))) {
            return false; // an etcd ticket lapses by its etcd lease; one within its life lapses by its time
        }
        return nanos - aheadSince.computeIfAbsent(new Unchanged(name, w), u -> nanos) > UNCHANGED_NANOS;
    }

    private boolean dead(Identity process) {
        return checker.explain(process).liveness() == Liveness.DEAD;
    }

    /** Refusing a free lease as {@code first} waits ahead: the holder's verdict (never falsely alive), whose turn. */
    static Verdict turnOf(LeaseBook.Waiter first, Verdict holder) {
        String waiting = first.by().equals(first.who()) ? "pid " + first.who().pid()
                : "pid " + first.by().pid() + " (for pid " + first.who().pid() + ")";
        return new Verdict(holder.reason(), holder.detail() + "; the lease is free to the queue, and " + waiting
                + " has waited for it longer: waiters are served in the order they came", holder.exit());
    }
}
