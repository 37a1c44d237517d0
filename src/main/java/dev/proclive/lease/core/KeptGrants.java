package dev.proclive.lease.core;

import dev.proclive.lease.book.Records;
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
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Kept grants, all looked at every {@value #LOOK_MS} ms (an eighth of the shortest TTL, if less) by one daemon thread so
 * a loss is known within a second, and before a newcomer may take the lease after its TTL. On
 * etcd another process's grant ends as its holder dies, so nobody waits out its TTL (a launcher ends its own).
 */
final class KeptGrants {

    static final long LOOK_MS = 250;
    private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(LOOK_MS);
    /** Looks no closer together than this, whatever the TTL. */
    private static final long SHORTEST_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final LeaseLife engine;
    private final LeaseBook book;
    private final LivenessChecker checker;
    /** This process: a grant of its own ends with it, and nobody here could end it then. */
    private final Identity writer;
    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    /** Each grant's loss, held weakly: a grant whose leases are all gone leaves nothing behind. */
    private final Map<Grant, WeakReference<CompletableFuture<LeaseLost>>> losses = new ConcurrentHashMap<>();
    private final Rounds looks = new Rounds("proclive-lease-look", this::lookAtAll,
            () -> kept.isEmpty() ? OptionalLong.empty() : OptionalLong.of(System.nanoTime() + lookEvery()));
    /** etcd records whose watch fired (a change, or a break), to read when due. */
    private final Map<String, ToRead> toRead = new ConcurrentHashMap<>();
    /** Never on the look's thread, which a slow answer would hold up. */
    private final Rounds reads = new Rounds("proclive-lease-read", this::readChanged, this::nextRead);
    private volatile boolean closed;
    private int lossesSweptAt = 64;
    private final Map<String, Followed> followed = new ConcurrentHashMap<>();

    KeptGrants(LeaseLife engine, LeaseBook book, LivenessChecker checker, Identity writer) {
        this.engine = engine;
        this.book = book;
        this.checker = checker;
        this.writer = writer;
    }

    private record Grant(String name, long fence, Identity holder) {
    }

    private record Followed(long fence, CompletableFuture<Verdict> end) {
    }

    /** {@code at}: {@link System#nanoTime()}. */
    private record ToRead(Kept kept, long at) {
    }

    private static final class Kept {
        final Grant grant;
        volatile boolean keptFresh = true;
        /** The record's stamp when it was last read and found this grant's; null: read it at the next look. */
        volatile Object seen;
        volatile CompletableFuture<Void> watch;
        /** An eighth of its TTL, at most {@link #LOOK_NANOS}: the grant is said lost after 3/4 of it unconfirmed. */
        volatile long lookNanos;
        /** When its record is next looked at ({@link System#nanoTime()}): a short TTL's looks are its own cost. */
        volatile long lookAt = System.nanoTime();

        Kept(Grant grant, Duration ttl) {
            this.grant = grant;
            seenTtl(ttl);
        }

        /** A shorter TTL is looked at by its own period from now, not the old one's. */
        void seenTtl(Duration ttl) {
            long eighth = ttl.compareTo(Duration.ofNanos(LOOK_NANOS * 8)) >= 0 ? LOOK_NANOS : ttl.toNanos() / 8;
            lookNanos = Math.max(SHORTEST_LOOK_NANOS, eighth);
            long due = System.nanoTime() + lookNanos;
            if (due - lookAt < 0) {
                lookAt = due;
            }
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
        if (!granted.granted()) {
            return;
        }
        if (closed) { // granted as the store closed: nothing here keeps it, and its holder is told so at once
            found(granted.name(), granted.fence(), granted.holder(),
                    Losses.closed(granted.fence(), Optional.of(granted.holder())));
            return;
        }
        Kept k = new Kept(new Grant(granted.name(), granted.fence(), granted.holder()), granted.ttl());
        if (namedByBook()) {
            book.keep(new LeaseBook.Grant(granted, 0));
        }
        k.seen = book.writtenStamp(granted.name(), granted.fence()).orElse(null); // as its one writer: not read back
        Kept before = kept.put(granted.name(), k);
        if (before != null) {
            before.cancel();
        }
        if (closed && kept.remove(granted.name(), k)) { // closed as it was put: the close may not have seen it
            k.cancel();
            found(granted.name(), granted.fence(), granted.holder(),
                    Losses.closed(granted.fence(), Optional.of(granted.holder())));
            return;
        }
        sweepLosses();
        looks.in(lookEvery()); // one set sooner stays: a new grant is looked at with the others
        if (book.expires()) {
            watch(k);
            if (granted.tokenDigest().isEmpty() && !Records.sameProcess(granted.holder(), writer)) {
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
                return; // UNKNOWN is not proven dead: its grant is left as it is
            }
            try {
                // how it ended, if the kernel told the watch, the record keeps ("its holder was killed by SIGKILL").
                OptionalLong code = verdict.exit().filter(x -> x.code().isPresent())
                        .map(x -> OptionalLong.of(x.code().getAsInt())).orElse(OptionalLong.empty());
                Verdict said = verdict.exit().map(x -> new Verdict(verdict.reason(), verdict.detail() + "; its holder "
                        + x, verdict.exit())).orElse(verdict);
                engine.end(granted.name(), granted.fence(), LeaseLife.End.died(granted.holder(), code, said));
            } catch (IOException | RuntimeException e) {
                // not kept any more: it expires by itself
            }
        });
    }

    boolean following(String name, long fence) {
        Followed f = followed.get(name);
        return f != null && f.fence() == fence;
    }

    void unfollow(String name, long fence) {
        Followed f = followed.get(name);
        if (f != null && f.fence() == fence && followed.remove(name, f)) {
            f.end().cancel(false);
        }
    }

    /** Only once the map has doubled: a thousand grants kept one after another cost a thousand steps, not a million. */
    private void sweepLosses() {
        if (losses.size() < lossesSweptAt) {
            return;
        }
        losses.values().removeIf(ref -> ref.get() == null);
        lossesSweptAt = Math.max(64, 2 * losses.size());
    }

    /**
     * Written (again, as its holder asked again): a loss told before was of the grant as it was; the lease starts with
     * none, kept by the book from now (a session file's lapse forgotten; an untold one stays). Before {@link #keep}.
     */
    void grantWritten(String name, long fence, Identity holder) {
        losses.computeIfPresent(new Grant(name, fence, holder), (g, ref) -> {
            CompletableFuture<LeaseLost> told = ref.get();
            return told == null || told.isDone() ? null : ref;
        });
        book.ended(name, fence);
    }

    /** Completes when this JVM knows the grant lost; never if released or handed off here. One future per grant. */
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

    void found(String name, long fence, Identity holder, LeaseLost why) {
        WeakReference<CompletableFuture<LeaseLost>> ref = losses.get(new Grant(name, fence, holder));
        CompletableFuture<LeaseLost> f = ref == null ? null : ref.get();
        if (f != null) {
            f.complete(why);
        }
        // one unconfirmed may still be written under: a session file names it on until it ends
        forget(name, fence, holder, why.why() != LeaseChange.UNCONFIRMED);
    }

    /** The grant is no longer kept fresh (its holder ended), though its loss is still told. */
    void holderEnded(String name, long fence, Identity holder) {
        Kept k = kept.get(name);
        if (k != null && k.grant.equals(new Grant(name, fence, holder))) {
            k.keptFresh = false;
            if (namedByBook()) {
                book.ended(name, fence); // its session file keeps it fresh one TTL more, no longer
            }
        }
    }

    /** Just renewed: its stamp as one writer's (another's write shows another) spares a read; kept by its new TTL. */
    void written(LeaseRecord record) {
        Kept k = kept.get(record.name());
        if (k != null && k.grant.equals(new Grant(record.name(), record.fence(), record.holder()))) {
            k.seenTtl(record.ttl());
            looks.in(lookEvery());
            if (k.keptFresh && namedByBook()) {
                book.keep(new LeaseBook.Grant(record, 0));
            }
            book.writtenStamp(record.name(), record.fence()).ifPresent(stamp -> k.seen = stamp);
        }
    }

    void lookNow(String name, long fence, Identity holder) {
        Grant g = new Grant(name, fence, holder);
        if (!unconfirmed(g)) {
            judge(g);
        }
    }

    /** A directory's session file names the grants; an etcd record is attached to an expiring lease. */
    private boolean namedByBook() {
        return !book.expires();
    }

    /**
     * Released or handed off through a lease of the grant: kept no more, its loss never told. Returns its loss future,
     * which may be another lease's (the grant written again for its holder), then still to be told.
     */
    CompletableFuture<LeaseLost> release(String name, long fence, Identity holder) {
        WeakReference<CompletableFuture<LeaseLost>> ref = losses.remove(new Grant(name, fence, holder));
        forget(name, fence, holder, true);
        return ref == null ? null : ref.get();
    }

    /** A release that did not release the grant (lost before, or the write failed): its loss is told after all. */
    void unreleased(String name, long fence, Identity holder, CompletableFuture<LeaseLost> lost) {
        losses.putIfAbsent(new Grant(name, fence, holder), new WeakReference<>(lost));
        lookNow(name, fence, holder);
    }

    /** {@code letGo}: nor named by a session file (though the fence may be another holder's now). */
    private void forget(String name, long fence, Identity holder, boolean letGo) {
        Kept k = kept.get(name);
        if (k != null && k.grant.equals(new Grant(name, fence, holder)) && kept.remove(name, k)) {
            k.cancel();
            if (letGo && namedByBook()) {
                book.ended(name, fence);
            }
        }
    }

    private long lookEvery() {
        return kept.values().stream().mapToLong(k -> k.lookNanos).reduce(LOOK_NANOS, Math::min);
    }

    private void lookAtAll() {
        for (Kept k : kept.values()) {
            Daemons.surviving(() -> look(k)).run();
        }
    }

    private void look(Kept k) {
        Grant g = k.grant;
        if (kept.get(g.name()) != k || unconfirmed(g) || book.expires()) { // etcd: read when its watch says
            return;
        }
        long now = System.nanoTime();
        if (now - k.lookAt < -SHORTEST_LOOK_NANOS / 2) { // not due: looked at with grants of a shorter TTL
            return;
        }
        k.lookAt = now + k.lookNanos;
        Optional<Object> stamp = RecordWatches.stamp(book, g.name());
        if (stamp.isPresent() && stamp.get().equals(k.seen)) {
            return;
        }
        k.seen = judge(g) ? stamp.orElse(null) : null; // taken before the read: a write after it is read next time
    }

    private boolean unconfirmed(Grant g) {
        if (!book.lost(g.name(), g.fence())) {
            return false;
        }
        found(g.name(), g.fence(), g.holder(), book.lostBecause(g.name(), g.fence())
                .map(why -> Losses.unconfirmed(g.fence(), Optional.of(g.holder()), why))
                .orElseGet(() -> Losses.unconfirmed(g.fence(), Optional.of(g.holder()))));
        return true;
    }

    /** Whether the record is still the grant's (false also when unknown); tells its loss if it shows one. */
    private boolean judge(Grant g) {
        Optional<LeaseRecord> now;
        try {
            now = engine.read(g.name());
        } catch (IOException | RuntimeException e) {
            return false; // a corrupt record is a lost one only once a writer proves it: next look
        }
        if (now.isPresent() && now.get().granted() && now.get().fence() == g.fence()
                && Records.sameProcess(now.get().holder(), g.holder())) {
            Kept k = kept.get(g.name());
            if (k != null && k.grant.equals(g)) {
                k.seenTtl(now.get().ttl());
            }
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

    private OptionalLong nextRead() {
        return toRead.values().stream().mapToLong(ToRead::at).reduce((soonest, at) -> at - soonest < 0 ? at : soonest);
    }

    /** Tells each kept grant's holder now, not after its TTL, when another may hold it; unknown losses stay untold. */
    void close() {
        closed = true;
        for (Kept k : List.copyOf(kept.values())) {
            if (k.keptFresh) { // one whose holder ended has nobody to tell
                found(k.grant.name(), k.grant.fence(), k.grant.holder(),
                        Losses.storeClosed(k.grant.fence(), Optional.of(k.grant.holder())));
            }
        }
        kept.values().forEach(Kept::cancel);
        kept.clear();
        followed.values().forEach(f -> f.end().cancel(false));
        followed.clear();
        looks.close(Duration.ZERO);
        reads.close(Duration.ZERO);
        toRead.clear();
    }
}
