package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook;
import java.io.IOException;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Grants ended the moment their holder dies, so that nobody anywhere waits out their TTL: on an
 * expiring book (etcd), one this JVM wrote whose holder is another process and not a spawned child
 * (that one's launcher ends it, with the status); and every grant {@link HolderKeeper} keeps. Only
 * a death is written: a holder that can no longer be seen from here (the exit watch says UNKNOWN)
 * is not followed any more, and its grant is left as it is. One watch per lease: a newer grant's
 * replaces an older one's.
 */
final class HolderWatches {

    private final LeaseEngine engine;
    private final LeaseBook book;
    private final LivenessChecker checker;
    /** This process: a grant of its own ends with it, and nobody here could end it then. */
    private final Identity writer;
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();

    HolderWatches(LeaseEngine engine, LeaseBook book, LivenessChecker checker, Identity writer) {
        this.engine = engine;
        this.book = book;
        this.checker = checker;
        this.writer = writer;
    }

    private record Watch(long fence, CompletableFuture<Verdict> end) {
    }

    /** Watches the holder of {@code granted}, where it is one to watch. */
    void watch(LeaseRecord granted) {
        if (book.expires() && granted.granted() && granted.tokenDigest().isEmpty()
                && !LeaseRules.sameProcess(granted.holder(), writer)) {
            follow(granted);
        }
    }

    /** Ends {@code granted} when its holder dies; whether or not it is one {@link #watch} follows. */
    void follow(LeaseRecord granted) {
        Watch watch = new Watch(granted.fence(), checker.onExit(granted.holder()));
        Watch before = watches.put(granted.name(), watch);
        if (before != null && before != watch) {
            before.end().cancel(false);
        }
        watch.end().thenAccept(verdict -> {
            watches.remove(granted.name(), watch);
            if (verdict.liveness() != Liveness.DEAD) {
                return; // cannot be seen from here: not proven dead, never ended as dead
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
        Watch w = watches.get(name);
        return w != null && w.fence() == fence;
    }

    /** The grant at {@code fence} of lease {@code name} ended here: its holder's watch is no longer needed. */
    void unwatch(String name, long fence) {
        Watch w = watches.get(name);
        if (w != null && w.fence() == fence && watches.remove(name, w)) {
            w.end().cancel(false);
        }
    }

    void close() {
        watches.values().forEach(w -> w.end().cancel(false));
        watches.clear();
    }
}
