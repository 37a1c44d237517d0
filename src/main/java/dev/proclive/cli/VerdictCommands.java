package dev.proclive.cli;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.ProcLive;
import dev.proclive.Verdict;
import dev.proclive.spi.ProcessLookup;
import dev.proclive.spi.ProcessState;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** The commands that record a process or judge one: {@code identify}, {@code check}, {@code wait}. */
final class VerdictCommands {

    private VerdictCommands() {
    }

    /** {@code identify PID}: that process's identity, one JSON line; exit 3 when none can be recorded. */
    static final class Identify implements Command {
        @Override
        public int run(List<String> args, Io io) {
            if (args.size() != 1) {
                throw new Options.Usage("identify takes exactly one PID");
            }
            long pid = Arguments.pid(args.get(0));
            Optional<Identity> identity = ProcLive.identify(pid);
            if (identity.isEmpty()) {
                Say.line(io.err(), "no identity could be determined: " + whyNot(pid));
                return ExitCode.NONE.code();
            }
            return Input.print(identity, io);
        }

        /** What the process's lookup said, where it says: gone, or why its start cannot be read. */
        private static String whyNot(long pid) {
            ProcessLookup lookup = LivenessChecker.system().introspector().lookupProcess(pid);
            if (lookup instanceof ProcessLookup.Gone gone) {
                return gone.detail();
            }
            if (lookup instanceof ProcessLookup.Unknown unknown) {
                return unknown.detail();
            }
            if (lookup instanceof ProcessLookup.Found found
                    && found.info().state() != ProcessState.LIVE) {
                return "pid " + pid + " is " + found.info().state().name().toLowerCase(java.util.Locale.ROOT);
            }
            return "this host's name could not be read";
        }
    }

    /** {@code check [JSON]}: the verdict on an identity (the argument, or stdin); exit 0 alive, 1 dead, 2 unknown. */
    static final class Check implements Command {
        @Override
        public int run(List<String> args, Io io) {
            if (args.size() > 1) {
                throw new Options.Usage("check takes at most one JSON argument");
            }
            Identity identity = args.isEmpty() ? Input.identity(io.in()) : Input.identity("check", args.get(0));
            Verdict verdict = ProcLive.explain(identity);
            io.out().println(IdentityJson.verdict(verdict));
            return ExitCode.of(verdict.liveness());
        }
    }

    /**
     * {@code wait [JSON] [--timeout SECONDS]}: waits for the end of the identity given (as for
     * {@code check}) and prints its verdict once final. Exit 0 DEAD, 1 still ALIVE at the timeout,
     * 2 UNKNOWN (at once, when it cannot be proven alive to begin with).
     */
    static final class Wait implements Command {
        @Override
        public int run(List<String> args, Io io) {
            Options o = Options.parse("wait", args, List.of(Options.Spec.value("--timeout")), false);
            if (o.words().size() > 1) {
                throw new Options.Usage("wait takes at most one JSON argument");
            }
            Long timeoutMillis = null;
            if (o.has("--timeout")) {
                timeoutMillis = Arguments.seconds("--timeout", o.value("--timeout").get(), true, 0).toMillis();
            }
            Identity identity = o.words().isEmpty() ? Input.identity(io.in()) : Input.identity("wait", o.words().get(0));
            CompletableFuture<Verdict> end = ProcLive.onExit(identity);
            Verdict verdict;
            String limit = timeoutMillis == null ? "" : Say.seconds(java.time.Duration.ofMillis(timeoutMillis));
            boolean waits = !end.isDone() && (timeoutMillis == null || timeoutMillis > 0); // --timeout 0 only looks
            if (waits) { // said at once: a person (or a log) sees what the command is doing, and for whom
                Say.line(io.err(), "waiting for " + Say.process(identity) + " to end" + (limit.isEmpty() ? "" : ", up to " + limit));
            }
            try {
                if (timeoutMillis != null) {
                    // on a monotonic clock that counts no step back: a wall clock stepped back never stretches it
                    dev.proclive.spi.internal.Elapsed.await(end, java.time.Duration.ofMillis(timeoutMillis));
                }
                verdict = end.isDone() || timeoutMillis == null ? end.get() : null;
                if (verdict == null) {
                    end.cancel(false);
                    verdict = ProcLive.explain(identity);
                }
            } catch (InterruptedException | ExecutionException | java.util.concurrent.CancellationException e) {
                verdict = ProcLive.explain(identity);
            }
            if (waits && verdict.liveness() == dev.proclive.Liveness.ALIVE) {
                Say.line(io.err(), "gave up waiting" + (limit.isEmpty() ? "" : " after " + limit) + ": "
                        + Say.process(identity) + " is still alive");
            }
            io.out().println(IdentityJson.verdict(verdict));
            switch (verdict.liveness()) { // the end came: 0; still alive at the timeout: 1
                case DEAD:
                    return ExitCode.OK.code();
                case ALIVE:
                    return ExitCode.NO.code();
                default:
                    return ExitCode.UNKNOWN.code();
            }
        }
    }
}
