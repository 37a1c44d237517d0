package dev.proclive.lease.core;

import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseLostException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook;
import dev.proclive.text.OneLine;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * {@code LeaseStore.keepHolders}: grants of holders ALIVE here are kept and ended when they die, of DEAD ones at once;
 * another machine's are its own keeper's, and one not seen from here is judged again the next poll.
 */
final class HolderKeeper {

    /** Doubling to 1 s, each pause off by up to a fifth at random, so that keepers that failed together retry apart. */
    private static final long FIRST_PAUSE_MS = 25;
    private static final long MOST_PAUSE_MS = 1_000;

    private final LeaseLife engine;
    private final KeptGrants keptGrants;
    private final LivenessChecker checker;
    private final LeaseBook book;
    /** The grants this keeper kept (their holder ALIVE here), as {@code NAME@FENCE}, among those listed last. */
    private final Set<String> keptHere = new HashSet<>();
    /** Of {@link #keptHere}, those whose holder cannot be seen from here now: said once, until seen again. */
    private final Set<String> unseen = new HashSet<>();

    HolderKeeper(LeaseLife engine, KeptGrants keptGrants, LivenessChecker checker) {
        this.engine = engine;
        this.keptGrants = keptGrants;
        this.checker = checker;
        this.book = engine.book();
    }

    void run(Duration poll, Consumer<String> says) throws InterruptedException {
        int failures = 0;
        boolean answered = false;
        while (!engine.closed()) {
            List<LeaseBook.Grant> grants;
            try {
                grants = book.grants();
            } catch (InterruptedIOException e) {
                throw new InterruptedException(e.getMessage());
            } catch (IOException | RuntimeException | Error e) { // an Error too: the keeper never gives up
                long base = Math.min(MOST_PAUSE_MS, FIRST_PAUSE_MS << Math.min(failures, 16));
                failures++;
                Duration pause = Duration.ofMillis(base * (80 + ThreadLocalRandom.current().nextInt(41)) / 100);
                says.accept("cannot read the grants (" + OneLine.escape(String.valueOf(e.getMessage())) + "); trying again in "
                        + pause.toMillis() + " ms");
                Thread.sleep(pause.toMillis());
                continue;
            }
            if (engine.closed()) {
                break; // closed while it read: what it read is not judged through a closed store
            }
            if (!answered) {
                answered = true;
                says.accept("keeping the grants of this machine's holders alive; ending each the moment its holder dies");
            } else if (failures > 0) {
                says.accept("the grants can be read again: keeping");
            }
            failures = 0;
            Set<String> listed = new HashSet<>();
            for (LeaseBook.Grant g : grants) {
                if (engine.closed()) {
                    break;
                }
                listed.add(key(g.record()));
                try {
                    look(g, says);
                } catch (LeaseLostException e) {
                    // ended or taken since it was listed: no longer a grant to keep
                } catch (InterruptedIOException e) {
                    throw new InterruptedException(e.getMessage());
                } catch (IOException | RuntimeException | Error e) {
                    says.accept("cannot keep lease " + g.record().name() + " at fence " + g.record().fence() + " ("
                            + OneLine.escape(String.valueOf(e.getMessage())) + "); trying again");
                }
            }
            keptHere.retainAll(listed);
            unseen.retainAll(listed);
            Thread.sleep(Math.max(1, poll.toMillis()));
        }
        says.accept("the store is closed: no longer keeping");
    }

    private static String key(LeaseRecord r) {
        return r.name() + "@" + r.fence();
    }

    private void look(LeaseBook.Grant g, Consumer<String> says) throws IOException {
        LeaseRecord r = g.record();
        String key = key(r);
        if (keptGrants.following(r.name(), r.fence())) {
            if (!book.keeping(r.name(), r.fence())) {
                book.keep(g); // given up while etcd did not answer, and still there: kept again
            }
            if (!book.expires() && book.lost(r.name(), r.fence())) {
                // a directory's session file: its writes have failed for 3/4 of the TTL (tried again every second)
                throw new IOException("its keeping went unconfirmed: the session file could not be written for 3/4 of its "
                        + "TTL, and a newcomer that takes an UNKNOWN holder's lease may take it once the TTL has passed");
            }
            return;
        }
        Verdict now = checker.explain(r.holder());
        if (now.liveness() == Liveness.DEAD) {
            // ended now, as a newcomer here would: nobody waits out a TTL another grant on its etcd lease renews
            engine.end(r.name(), r.fence(), LeaseLife.End.died(r.holder(), OptionalLong.empty(), now));
            return;
        }
        if (now.liveness() != Liveness.ALIVE) {
            if (keptHere.contains(key) && unseen.add(key)) {
                says.accept("lease " + r.name() + " at fence " + r.fence() + ": its holder cannot be seen from here now ("
                        + OneLine.escape(now.detail()) + "); not ended, as nothing proves it dead; judged again each poll");
            }
            return;
        }
        if (unseen.remove(key)) {
            says.accept("lease " + r.name() + " at fence " + r.fence() + ": its holder is seen again; keeping it");
        }
        keptHere.add(key);
        book.keep(g); // fresh by the book's keep-alive or session file: the record itself is not rewritten
        keptGrants.follow(r);
    }
}
