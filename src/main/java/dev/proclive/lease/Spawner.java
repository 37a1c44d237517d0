package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * {@link LeaseStore#spawn}'s part after the reservation: the command started with the reservation
 * in its environment, handed the lease, and its end recorded when it exits. Once the command has
 * started, the answer is {@link Spawn.Started}, whatever fails after.
 */
final class Spawner {

    private Spawner() {
    }

    /**
     * Starts {@code command} under {@code reserved}.
     *
     * @throws IOException as {@link ProcessBuilder#start()} throws (the reservation then ends as
     *                     {@code spawn_failed})
     */
    static Spawn.Started start(LeaseKeeper keeper, String name, Lease reserved, ProcessBuilder command)
            throws IOException {
        Map<String, String> env = command.environment();
        env.put(LeaseStore.TOKEN_VARIABLE, reserved.token().orElseThrow());
        env.put(LeaseStore.NAME_VARIABLE, name);
        env.put(LeaseStore.DIR_VARIABLE, keeper.directory().toString());
        env.put(LeaseStore.FENCE_VARIABLE, Long.toString(reserved.fence()));
        Process p;
        try {
            p = command.start();
        } catch (IOException | RuntimeException e) {
            try {
                keeper.end(name, reserved.fence(), Optional.of(reserved.holder()), LeaseRecord.Ending.How.SPAWN_FAILED,
                        OptionalLong.empty());
            } catch (IOException | RuntimeException ending) {
                e.addSuppressed(ending);
            }
            throw e;
        }
        Lease lease = reserved;
        Optional<IOException> failure = Optional.empty();
        try {
            lease = handOff(keeper, name, reserved, p);
        } catch (IOException e) {
            failure = Optional.of(e);
        } catch (RuntimeException e) {
            failure = Optional.of(new IOException("the lease could not be handed to pid " + p.pid() + ": " + e, e));
        }
        endWhenExited(lease, p);
        return new Spawn.Started(lease, p, failure);
    }

    /**
     * The reservation handed to the started child: held by it, fence kept. A child that exits
     * before it can be identified or handed the lease ends it as {@code exited}; one that runs but
     * cannot be identified keeps it reserved (it carries the token).
     */
    private static Lease handOff(LeaseKeeper keeper, String name, Lease reserved, Process p) throws IOException {
        Optional<Identity> child = keeper.identify(p.pid());
        if (child.isPresent()) {
            try {
                return reserved.handOff(child.get());
            } catch (IllegalArgumentException notAlive) {
                // it exited between being identified and the hand-off
            }
        }
        try {
            if (p.waitFor(1, TimeUnit.SECONDS)) {
                keeper.end(name, reserved.fence(), Optional.of(reserved.holder()), LeaseRecord.Ending.How.EXITED,
                        OptionalLong.of(p.exitValue()), Optional.of(Verdict.of(Reason.EXITED, "pid " + p.pid()
                                + ", started for the lease, exited with status " + p.exitValue() + " before the hand-off")));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return reserved;
    }

    /** Ends {@code lease} as {@code exited} with the status when {@code p} exits, while this JVM lives. */
    private static void endWhenExited(Lease lease, Process p) {
        p.onExit().thenAccept(done -> {
            try {
                lease.exited(done.exitValue());
            } catch (IOException | RuntimeException e) {
                // the record stays as it is: its holder is now DEAD, and the next newcomer proves it
            }
        });
    }
}
