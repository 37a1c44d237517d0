package dev.proclive.lease.core;

import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.LivenessChecker;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.Lease;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.Daemons;
import dev.proclive.lease.book.LeaseNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** {@code LeaseStore.spawn} past the reservation: once the command starts, it answers {@link Acquisition.Started}. */
final class Spawner {

    /** How long stragglers told to stop with the command get to leave its cgroup, removed before the end is told. */
    private static final Duration STRAGGLERS = Duration.ofSeconds(2);

    private final LeaseLife engine;
    private final LivenessChecker checker;
    private final String name;
    private final GrantedLease reserved;
    private final Tracking tracking;
    /** What a child started through a shell that enters its cgroup is named once that shell has become the command. */
    private Optional<String> becomes = Optional.empty();

    Spawner(LeaseLife engine, LivenessChecker checker, GrantedLease reserved, Tracking tracking) {
        this.engine = engine;
        this.checker = checker;
        this.name = reserved.name();
        this.reserved = reserved;
        this.tracking = tracking;
    }

    /** @throws IOException as {@link ProcessBuilder#start()} does; the reservation then ends as {@code spawn_failed} */
    Acquisition.Started start(ProcessBuilder command, Map<String, String> book) throws IOException {
        Map<String, String> env = command.environment();
        // An outer lease's variables (lease run inside lease run) are not this lease's: none is inherited.
        env.keySet().removeIf(variable -> variable.startsWith("PROCLIVE_LEASE_"));
        env.put(LeaseNames.TOKEN_VARIABLE, reserved.token().orElseThrow());
        env.put(LeaseNames.NAME_VARIABLE, name);
        env.putAll(book);
        env.put(LeaseNames.FENCE_VARIABLE, Long.toString(reserved.fence()));
        Process p;
        try {
            p = start(command);
        } catch (IOException | RuntimeException e) {
            tracking.removeIfEmpty();
            try {
                engine.end(name, reserved.fence(), LeaseLife.End.as(LeaseChange.SPAWN_FAILED,
                        Optional.of(reserved.holder())));
            } catch (IOException | RuntimeException ending) {
                e.addSuppressed(ending);
            }
            throw e;
        }
        HandedOff handed = apart(() -> identifyAndHandOff(p));
        CompletableFuture<Void> recorded = handed.watched().isPresent()
                ? endWhenExited(handed.watched().get(), handed.child(), p)
                : CompletableFuture.completedFuture(null); // recorded in the hand-off
        Lease lease = handed.watched().orElse(reserved.tracked(tracking));
        return new Acquisition.Started(lease, new RecordedProcess(p, recorded, tracking), handed.failure());
    }

    private record HandedOff(Optional<Lease> watched, Optional<Identity> child, Optional<IOException> failure) {
    }

    /** The started child identified and handed the reservation; what fails is told, never thrown. */
    private HandedOff identifyAndHandOff(Process p) {
        Optional<Identity> child = Optional.empty();
        try {
            child = checker.identify(p.pid()).map(this::named);
            return new HandedOff(handOff(p, child), child, Optional.empty());
        } catch (IOException e) {
            return new HandedOff(Optional.of(reserved.tracked(tracking)), child, Optional.of(e));
        } catch (RuntimeException e) {
            return new HandedOff(Optional.of(reserved.tracked(tracking)), child,
                    Optional.of(new IOException("the lease could not be handed to pid " + p.pid() + ": " + e, e)));
        }
    }

    /** On its own thread: an interrupt closes the hand-off's file channels, leaving a running child unleased. */
    private static <T> T apart(Supplier<T> work) {
        boolean interrupted = Thread.interrupted();
        try {
            // join is not interruptible: an interrupt while it waits is kept, as is one from before
            return CompletableFuture.supplyAsync(work, Daemons.onThreadOf("proclive-hand-off")).join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * With a cgroup, starts a process that moves itself into it, then becomes the command: this JVM never moves, as its
     * other threads start processes too. A missing program still fails here.
     */
    private Process start(ProcessBuilder command) throws IOException {
        if (tracking.cgroup().isEmpty()) {
            return command.start();
        }
        List<String> given = command.command();
        List<String> program = new ArrayList<>(given);
        if (program.isEmpty()) {
            throw new IndexOutOfBoundsException("the command is empty"); // as ProcessBuilder.start says it
        }
        program.set(0, Executables.find(program.get(0), command.directory()));
        becomes = Optional.of(comm(program.get(0)));
        command.command(tracking.descendants().enter(tracking.cgroup().get().path(), program));
        try {
            return command.start();
        } finally {
            command.command(given);
        }
    }

    /** {@code child} named for its command, not the {@code sh} entering the cgroup: a holder's name is for people. */
    private Identity named(Identity child) {
        return becomes.map(n -> new Identity(child.pid(), child.start(), child.boot(), child.host(), n, child.pidns(),
                child.machine())).orElse(child);
    }

    /** The comm an exec of {@code program} gives: its file name, cut to Linux's 15 bytes. */
    private static String comm(String program) {
        byte[] file = java.nio.file.Path.of(program).getFileName().toString().getBytes(StandardCharsets.UTF_8);
        return new String(file, 0, Math.min(file.length, 15), StandardCharsets.UTF_8);
    }

    /** Empty once the end is recorded: a child that exits before the hand-off ends it, unless its token lives on. */
    private Optional<Lease> handOff(Process p, Optional<Identity> child) throws IOException {
        if (child.isPresent()) {
            try {
                return Optional.of(((GrantedLease) reserved.handOff(child.get())).tracked(tracking));
            } catch (IllegalArgumentException notAlive) {
                // it exited between being identified and the hand-off
            }
        }
        try {
            if (p.waitFor(1, TimeUnit.SECONDS)) {
                Identity self = reserved.holder();
                Identity exited = child.orElseGet(() -> new Identity(p.pid(), "", self.boot(), self.host(), "",
                        self.pidns(), self.machine())); // its pid alone: it exited before it could be identified
                Verdict verdict = Verdict.of(Reason.EXITED, "pid " + p.pid() + ", started for the lease, exited with"
                        + " status " + p.exitValue() + " before the hand-off");
                boolean ended = engine.end(name, reserved.fence(), new LeaseLife.End(LeaseChange.EXITED, Optional.of(self),
                        OptionalLong.of(p.exitValue()), Optional.of(verdict), Optional.of(exited), tracking));
                if (!ended && tracking.tracks()) {
                    superviseLeftBehind(reserved.fence());
                }
                return Optional.empty();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Optional.of(reserved.tracked(tracking));
    }

    /** Ends {@code lease} at {@code p}'s exit while this JVM lives or, where tracked, follows what is left. */
    private CompletableFuture<Void> endWhenExited(Lease lease, Optional<Identity> child, Process p) {
        CompletableFuture<Void> recorded = new CompletableFuture<>();
        p.onExit().thenAcceptAsync(done -> {
            try {
                boolean followed = false;
                try {
                    followed = !ended(lease, child, done.exitValue()) && tracking.tracks()
                            && superviseLeftBehind(lease.fence());
                } catch (IOException | RuntimeException e) {
                    // the record stays as it is: its holder is now DEAD, and the next newcomer proves it
                }
                // Even if lost meanwhile: removed before the end is told, as a launcher (lease run) exits then, and a
                // cgroup left behind stays until the next spawn's sweep.
                if (followed) {
                    tracking.removeIfEmpty();
                } else {
                    tracking.removeWhenEmpty(STRAGGLERS);
                }
            } finally {
                recorded.complete(null);
            }
        }, Daemons.onThreadOf("proclive-ending")); // a name of its own: the JDK's exit threads have none to tell
        return recorded;
    }

    /** False if the lease went to what was left or is another grant; one the child claimed ends as the child's. */
    private boolean ended(Lease lease, Optional<Identity> child, int status) throws IOException {
        if (lease.exited(status)) {
            return true;
        }
        if (child.isPresent() && !child.get().equals(lease.holder())) {
            return engine.end(name, lease.fence(), LeaseLife.End.exited(child.get(), OptionalLong.of(status), tracking));
        }
        return false;
    }

    /** While this JVM lives, at each holder's exit the lease ends or goes to the next; false if no longer theirs. */
    private boolean superviseLeftBehind(long fence) throws IOException {
        Optional<LeaseRecord> now = engine.read(name);
        if (now.isEmpty() || !now.get().held() || now.get().fence() != fence
                || !now.get().adoptedBy().map(how -> how.equals(tracking.how())).orElse(false)) {
            tracking.removeIfEmpty();
            return false; // ended, taken over, or adopted some other way: not this supervisor's to follow
        }
        Identity holder = now.get().holder();
        checker.onExit(holder).thenAcceptAsync(end -> { // never inline: a chain that re-forks would deepen one stack
            if (end.liveness() != Liveness.DEAD) {
                return; // it cannot be watched from here: the next newcomer judges it
            }
            try {
                if (!engine.end(name, fence, LeaseLife.End.exited(holder, OptionalLong.empty(), tracking))) {
                    superviseLeftBehind(fence);
                }
            } catch (IOException | RuntimeException e) {
                // the record stays as it is: its holder is DEAD, and the next newcomer proves it
            }
        }, Daemons.onThreadOf("proclive-ending"));
        return true;
    }
}
