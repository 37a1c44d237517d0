package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseBook;
import java.io.IOException;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the engine's parts (a grant's handle, its launcher, the watchers of kept grants, records and holders) ask of
 * it. Each write of a lease's life holds its lock and first proves the record not rolled back below the guard.
 */
interface LeaseLife {

    LeaseBook book();

    /** Whether the store is closing: work in the background stops. */
    boolean closed();

    /**
     * Without a lock, judged as a grant judges it.
     * @throws dev.proclive.lease.LeaseCorruptException if it cannot be trusted, or the guard is no fence
     */
    Optional<LeaseRecord> read(String name) throws IOException;

    /**
     * {@code holder}: anyone when empty; the record's TTL is kept unless the policy sets one.
     * @throws dev.proclive.lease.LeaseLostException if the grant is no longer {@code fence}'s and {@code holder}'s
     */
    LeaseRecord renew(String name, long fence, Optional<Identity> holder) throws IOException;

    /**
     * What a spawned command left behind (the kernel's word, or a token scan) takes the lease instead: returns false.
     * @return true if ended at that fence (now or before); false, and nothing written, when there is no record, or it
     *         is at another fence or another holder's
     */
    boolean end(String name, long fence, End end) throws IOException;

    /**
     * A reservation keeps its fence (the reserver never wrote under it); a held one takes the next: late writes fail.
     * @throws IllegalArgumentException if {@code to} is not ALIVE
     */
    LeaseRecord handOff(String name, long fence, Identity from, Identity to) throws IOException;

    /**
     * How a grant is to be ended. {@code holder}: anyone's when empty; {@code verdict}: judged now when empty;
     * {@code child}: a reservation's child that exited before hand-off; {@code tracking}: asked before a token scan.
     */
    record End(LeaseChange how, Optional<Identity> holder, OptionalLong exitCode, Optional<Verdict> verdict,
               Optional<Identity> child, Tracking tracking) {

        static End as(LeaseChange how, Optional<Identity> holder) {
            return new End(how, holder, OptionalLong.empty(), Optional.empty(), Optional.empty(), Tracking.NONE);
        }

        static End exited(Identity holder, OptionalLong exitCode, Tracking tracking) {
            return new End(LeaseChange.EXITED, Optional.of(holder), exitCode, Optional.empty(), Optional.empty(),
                    tracking);
        }

        static End died(Identity holder, OptionalLong exitCode, Verdict seen) {
            return new End(LeaseChange.EXITED, Optional.of(holder), exitCode, Optional.of(seen), Optional.empty(),
                    Tracking.NONE);
        }
    }
}
