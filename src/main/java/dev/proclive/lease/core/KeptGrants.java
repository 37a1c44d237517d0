package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseLost;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Daemons;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.lease.book.Rounds;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The grants a store keeps, on one daemon thread whatever their number (and, on etcd, one more
 * that reads the records their watches say changed); each thread ends once it finds nothing left
 * to do (the look, no grant kept; the reads, no record to read), and starts again with the next.
 * A record is never rewritten to stay fresh: the book keeps every grant fresh itself (etcd by one
 * keep-alive of the etcd lease they are attached to, a directory by one session file that names
 * them all). On {@code proclive-lease-look}, never behind a write that waits for an answer, one
 * look every {@value #LOOK_MS} ms goes over every kept grant, so that its loss is known within a
 * second: the book asked whether its keep-alive went unconfirmed, and a directory's record read
 * when its stamp shows it replaced since it was last read or written here (an etcd record is read
 * on {@code proclive-lease-read} when its watch says it changed). The stamp of a record this store wrote is taken by the book while it was the
 * one writer, so a change by another writer after it is never taken for one of this store's.
 * A grant is kept until it is released or handed off here, found lost, replaced by another grant
 * of the same name here, or the store is closed. One found unconfirmed may still be written under
 * (its holder lives, only its keeping failed): a directory's session file names it on until it
 * ends ({@link LeaseEngine#end}), so that it is fresh again once the writes go through. What one
 * grant's look throws is that grant's alone, and the look goes on.
 *
 * <p>A kept grant is ended the moment its holder dies, so that nobody anywhere waits out its TTL,
 * where its record expires (etcd) and its holder is another process and not a spawned child (that
 * one's launcher ends it, with the status); so is every grant {@link HolderKeeper} keeps. Only a
 * death is written: a holder that can no longer be seen from here (the exit watch says UNKNOWN) is
 * not followed any more, and its grant is left as it is. One exit watch per lease.
 */
final class KeptGrants {

    static final long LOOK_MS = 250;
    private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(LOOK_MS);

    private final LeaseEngine engine;
    private final LeaseBook book;
    private final LivenessChecker checker;
    /** This process: a grant of its own ends with it, and nobody here could end it then. */
    private final Identity writer;
    /** The grant kept for each lease name. */
    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    /** Each grant's loss, held weakly: a grant whose leases are all gone leaves nothing behind. */
    private final Map<Grant, WeakReference<CompletableFuture<LeaseLost>>> losses = new ConcurrentHashMap<>();
    /** One look at every kept grant {@value #LOOK_MS} ms after the last ended, while any is kept. */
    private final Rounds looks = new Rounds("proclive-lease-look", this::lookAtAll,
            () -> kept.isEmpty() ? OptionalLong.empty() : OptionalLong.of(System.nanoTime() + LOOK_NANOS));
    /** The etcd records to read, by lease name, each with its grant and when it is due: their watch said they changed, or broke. */
    private final Map<String, ToRead> toRead = new ConcurrentHashMap<>();
    /** Where they are read: never on the look's thread, which a slow answer would hold up. */
    private final Rounds reads = new Rounds("proclive-lease-read", this::readChanged, this::nextRead);
    private volatile boolean closed;
    /** The size {@link #losses} may grow to before the entries of leases nobody holds are dropped. */
    private int lossesSweptAt = 64;
    /** The holder followed for each lease name: its grant's fence, and the exit watch on it. */
    private final Map<String, Followed> followed = new ConcurrentHashMap<>();

    KeptGrants(LeaseEngine engine, LeaseBook book, LivenessChecker checker, Identity writer) {
        this.engine = engine;
        this.book = book;
        this.checker = checker;
        this.writer = writer;
    }

    private record Grant(String name, long fence, Identity holder) {
    }

    private record Followed(long fence, CompletableFuture<Verdict> end) {
    }

    /** A kept grant's record to read by {@code at} ({@link System#nanoTime()}). */
    private record ToRead(Kept kept, long at) {
    }

    private static final class Kept {
        final Grant grant;
        /** Whether its book keeps it fresh (not once its holder ended). */
        volatile boolean keptFresh = true;
        /** The record's stamp when it was last read and found this grant's; null: read it at the next look. */
        volatile Object seen;
        volatile CompletableFuture<Void> watch;

        Kept(Grant grant) {
            this.grant = grant;
        }

        void cancel() {
            keptFresh = false;
            CompletableFuture<Void> w = watch;
            if (w != null) {
                w.cancel(false);
            }
        }
    }

    void keep(LeaseRecord granted) {
        if (closed || !granted.granted()) {
            return;
        }
        Kept k = new Kept(new Grant(granted.name(), granted.fence(), granted.holder()));
        if (namedByBook()) {
            book.keep(new LeaseBook.Grant(granted, 0)); // an etcd record is attached when granted
        }
        k.seen = book.writtenStamp(granted.name(), granted.fence()).orElse(null); // written here: not read again
        Kept before = kept.put(granted.name(), k);
        if (before != null) {
            before.cancel();
        }
        sweepLosses();
        looks.in(LOOK_NANOS); // one set sooner stays: a new grant is looked at with the others
        if (book.expires()) {
            watch(k);
            if (granted.tokenDigest().isEmpty() && !LeaseRules.sameProcess(granted.holder(), writer)) {
                follow(granted); // last: its end may be written at once (a holder that died since the grant)
            }
        }
    }

    /** Ends {@code granted} when its holder dies, whether or not it is kept here. */
    void follow(LeaseRecord granted) {
        Followed watch = new Followed(granted.fence(), checker.onExit(granted.holder()));
        Followed[] replaced = {null};
        Followed now = followed.compute(granted.name(), (n, before) -> {
            if (before != null && before.fence() > watch.fence()) {
                return before; // a grant listed late does not take a newer one's place
            }
            replaced[0] = before;
            return watch;
        });
        if (replaced[0] != null) {
            replaced[0].end().cancel(false);
        }
        if (now != watch || closed) { // closed: nothing ends a grant through this store any more
            followed.remove(granted.name(), watch);
            watch.end().cancel(false);
            return;
        }
        watch.end().thenAccept(verdict -> {
            followed.remove(granted.name(), watch);
            if (verdict.liveness() != Liveness.DEAD || closed) {
                return; // cannot be seen from here: not proven dead, never ended as dead (nor by a closed store)
            }
            try {
                // How it ended, where the kernel told the watch: the record keeps it ("its holder was killed by SIGKILL").
                OptionalLong code = verdict.exit().filter(x -> x.code().isPresent())
                        .map(x -> OptionalLong.of(x.code().getAsInt())).orElse(OptionalLong.empty());
                Verdict said = verdict.exit().map(x -> new Verdict(verdict.reason(), verdict.detail() + "; its holder "
                        + x, verdict.exit())).orElse(verdict);
                engine.end(granted.name(), granted.fence(), LeaseEngine.End.died(granted.holder(), code, said));
            } catch (IOException | RuntimeException e) {
                // not kept any more: it expires by itself
            }
        });
    }

    /** Whether the holder of the grant at {@code fence} of lease {@code name} is followed now. */
    boolean following(String name, long fence) {
        Followed f = followed.get(name);
        return f != null && f.fence() == fence;
    }

    /** The grant at {@code fence} of lease {@code name} ended here: its holder is followed no more. */
    void unfollow(String name, long fence) {
        Followed f = followed.get(name);
        if (f != null && f.fence() == fence && followed.remove(name, f)) {
            f.end().cancel(false);
        }
    }

    /**
     * Drops the losses of leases nobody holds any more once their number has doubled since it was
     * last done: a thousand grants kept one after another cost a thousand steps, not a million.
     */
    private void sweepLosses() {
        if (losses.size() < lossesSweptAt) {
            return;
        }
        losses.values().removeIf(ref -> ref.get() == null);
        lossesSweptAt = Math.max(64, 2 * losses.size());
    }

    /**
     * Completes with the grant's loss the moment this JVM knows it; never, for a grant released or
     * handed off here. The same future for every lease of one grant while one of them holds it.
     */
    CompletableFuture<LeaseLost> lost(String name, long fence, Identity holder) {
        // held strongly here until returned: a weak reference alone may be cleared before the caller has it
        AtomicReference<CompletableFuture<LeaseLost>> found = new AtomicReference<>();
        losses.compute(new Grant(name, fence, holder), (g, ref) -> {
            CompletableFuture<LeaseLost> known = ref == null ? null : ref.get();
            found.set(known != null ? known : new CompletableFuture<>());
            return known != null ? ref : new WeakReference<>(found.get());
        });
        return found.get();
    }

    /** The grant is lost as {@code why} says: its loss is told (unless it was released here), and it is no longer kept. */
    void found(String name, long fence, Identity holder, LeaseLost why) {
        WeakReference<CompletableFuture<LeaseLost>> ref = losses.get(new Grant(name, fence, holder));
        CompletableFuture<LeaseLost> f = ref == null ? null : ref.get();
        if (f != null) {
            f.complete(why);
        }
        // One unconfirmed may still be written under: a session file names it on until it ends.
        forget(name, fence, holder, why.why() != LeaseChange.UNCONFIRMED);
    }

    /** The grant is no longer kept fresh (its holder ended), though its loss is still told. */
    void holderEnded(String name, long fence, Identity holder) {
        Kept k = kept.get(name);
        if (k != null && k.grant.equals(new Grant(name, fence, holder))) {
            k.keptFresh = false;
            if (namedByBook()) {
                book.ended(name, fence); // nor named by a directory's session file: it is fresh a TTL on, no longer
            }
        }
    }

    /**
     * {@code record}, a kept grant's, was just written here (renewed) as its one writer: its stamp is
     * taken, and the look does not read it back; a directory's session file keeps it by the TTL it
     * has now (a renewal may have set another).
     */
    void written(LeaseRecord record) {
        Kept k = kept.get(record.name());
        if (k != null && k.grant.equals(new Grant(record.name(), record.fence(), record.holder()))) {
            if (k.keptFresh && namedByBook()) {
                book.keep(new LeaseBook.Grant(record, 0));
            }
            book.writtenStamp(record.name(), record.fence()).ifPresent(stamp -> k.seen = stamp);
        }
    }

    /** Looks at the grant's record now, and tells its loss if it shows one. */
    void lookNow(String name, long fence, Identity holder) {
        Grant g = new Grant(name, fence, holder);
        if (!unconfirmed(g)) {
            judge(g);
        }
    }

    /**
     * Whether the book keeps this store's grants fresh by naming them itself (a directory's session
     * file), not by an expiring lease each record is attached to when written.
     */
    private boolean namedByBook() {
        return !book.expires();
    }

    /** The grant is released or handed off here: no longer kept, and its loss never told. */
    void release(String name, long fence, Identity holder) {
        losses.remove(new Grant(name, fence, holder));
        forget(name, fence, holder, true);
    }

    /** A release that did not release the grant (lost before, or the write failed): its loss is told after all. */
    void unreleased(String name, long fence, Identity holder, CompletableFuture<LeaseLost> lost) {
        losses.putIfAbsent(new Grant(name, fence, holder), new WeakReference<>(lost));
        lookNow(name, fence, holder);
    }

    /**
     * The grant is no longer kept; {@code letGo}: nor named by a directory's session file (though
     * the fence may be another holder's now).
     */
    private void forget(String name, long fence, Identity holder, boolean letGo) {
        Kept k = kept.get(name);
        if (k != null && k.grant.equals(new Grant(name, fence, holder)) && kept.remove(name, k)) {
            k.cancel();
            if (letGo && namedByBook()) {
                book.ended(name, fence);
            }
        }
    }

    /** One look at every kept grant, each on its own. */
    private void lookAtAll() {
        for (Kept k : kept.values()) {
            Daemons.surviving(() -> look(k)).run();
        }
    }

    /** Asks the book whether the grant went unconfirmed, and reads a directory's record when it was replaced. */
    private void look(Kept k) {
        Grant g = k.grant;
        if (kept.get(g.name()) != k || unconfirmed(g) || book.expires()) { // etcd: read when its watch says
            return;
        }
        Optional<Object> stamp = RecordWatches.stamp(book, g.name());
        if (stamp.isPresent() && stamp.get().equals(k.seen)) {
            return;
        }
        k.seen = judge(g) ? stamp.orElse(null) : null; // taken before the read: a write after it is read next time
    }

    /** Whether the book knows the grant unconfirmed: then its loss is told. */
    private boolean unconfirmed(Grant g) {
        if (!book.lost(g.name(), g.fence())) {
            return false;
        }
        found(g.name(), g.fence(), g.holder(), Losses.unconfirmed(g.fence(), Optional.of(g.holder())));
        return true;
    }

    /** Reads the grant's record and tells its loss if it shows one; whether it is still the grant's (false: unknown). */
    private boolean judge(Grant g) {
        Optional<LeaseRecord> now;
        try {
            now = engine.read(g.name());
        } catch (IOException | RuntimeException e) {
            return false; // a corrupt record is a lost one only once a writer proves it: next look
        }
        if (now.isPresent() && now.get().granted() && now.get().fence() == g.fence()
                && LeaseRules.sameProcess(now.get().holder(), g.holder())) {
            Kept k = kept.get(g.name());
            if (k != null && k.grant.equals(g) && k.keptFresh && namedByBook()) {
                // by the TTL it has now: a renewal elsewhere may have set another
                book.keep(new LeaseBook.Grant(now.get(), 0));
            }
            return true;
        }
        Losses.of(g.fence(), Optional.of(g.holder()), now, book.expires())
                .ifPresent(why -> found(g.name(), g.fence(), g.holder(), why));
        return false;
    }

    /** An etcd record is read when its watch says it changed, and watched again while kept. */
    private void watch(Kept k) {
        Optional<CompletableFuture<Void>> changed = book.changed(k.grant.name());
        if (changed.isEmpty()) {
            return;
        }
        k.watch = changed.get();
        changed.get().whenComplete((v, e) -> {
            if (closed || kept.get(k.grant.name()) != k) {
                return;
            }
            // a broken watch is asked again after a pause
            long at = System.nanoTime() + (e == null ? 0 : TimeUnit.SECONDS.toNanos(1));
            toRead.merge(k.grant.name(), new ToRead(k, at),
                    (before, now) -> before.kept() == k && before.at() - at <= 0 ? before : now); // the sooner stays
            reads.by(at);
        });
    }

    /** Reads each record due, and watches it again while its grant is kept. */
    private void readChanged() {
        long now = System.nanoTime();
        for (Map.Entry<String, ToRead> e : toRead.entrySet()) {
            ToRead r = e.getValue();
            if (r.at() - now > 0 || !toRead.remove(e.getKey(), r) || kept.get(e.getKey()) != r.kept()) {
                continue;
            }
            Kept k = r.kept();
            Daemons.surviving(() -> {
                try {
                    lookNow(k.grant.name(), k.grant.fence(), k.grant.holder());
                } finally {
                    if (!closed && kept.get(k.grant.name()) == k) {
                        watch(k); // whatever the look met, the next change is watched for
                    }
                }
            }).run();
        }
    }

    /** When the next record is due to be read; none when none is. */
    private OptionalLong nextRead() {
        OptionalLong next = OptionalLong.empty();
        for (ToRead r : toRead.values()) {
            if (next.isEmpty() || r.at() - next.getAsLong() < 0) {
                next = OptionalLong.of(r.at());
            }
        }
        return next;
    }

    /** Keeps nothing more; the threads end. Losses not yet known are never told. */
    void close() {
        closed = true;
        kept.values().forEach(Kept::cancel);
        kept.clear();
        followed.values().forEach(f -> f.end().cancel(false));
        followed.clear();
        looks.close(Duration.ZERO);
        reads.close(Duration.ZERO);
        toRead.clear();
    }
}
