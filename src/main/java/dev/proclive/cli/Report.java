package dev.proclive.cli;

import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.Records;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.Liveness;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Optional;

/** What a lease request came to, said as {@code lease acquire}, {@code claim} and {@code run} say it. */
final class Report {

    private final PrintStream out;
    private final PrintStream err;

    Report(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /**
     * Prints what an acquisition came to as {@code lease acquire} does; its exit code. A fence is
     * printed only to its holder: with {@code printFence}, a refusal prints nothing on stdout (a
     * script's {@code F=$(… --print fence)} must not get another holder's fence). With
     * {@code toStdout} false ({@code lease run}: stdout is the command's) a refusal is one line
     * on stderr only; otherwise the record goes to stdout and the reason, one line, to stderr.
     */
    int acquisition(Acquisition a, boolean printFence, boolean toStdout) {
        if (a instanceof Acquisition.NotAlive notAlive) {
            Say.line(err, "the holder is not alive: " + notAlive.verdict()); // it died after it was named
            return ExitCode.NONE.code();
        }
        if (a instanceof Acquisition.NotCarrier notCarrier) {
            Say.line(err, "the holder does not carry the reservation's token in its initial environment, so it cannot"
                    + " claim it: " + notCarrier.verdict().detail());
            return ExitCode.NONE.code();
        }
        if (a instanceof Acquisition.Granted granted) {
            LeaseRecord r = granted.lease().record();
            out.println(printFence ? Long.toString(r.fence()) : LeaseJson.write(r));
            return ExitCode.OK.code();
        }
        LeaseRecord record;
        String json;
        String why;
        int code;
        if (a instanceof Acquisition.Held held) {
            record = held.record();
            json = LeaseJson.write(record, Optional.of(held.verdict()), Optional.empty());
            why = held.verdict().liveness() == dev.proclive.Liveness.ALIVE && record.granted()
                    ? "held by pid " + record.holder().pid() + " at fence " + record.fence() + ", which is alive"
                    // free, but a waiter that came first takes its turn: the holder's own verdict, and the queue's
                    : record.state().json() + " by pid " + record.holder().pid() + " at fence " + record.fence()
                            + ", which is " + held.verdict().liveness().name().toLowerCase(java.util.Locale.ROOT) + ": "
                            + held.verdict().detail();
            code = ExitCode.NO.code();
        } else {
            Acquisition.Undecided undecided = (Acquisition.Undecided) a;
            record = undecided.record();
            json = LeaseJson.write(record, Optional.of(undecided.verdict()), undecided.eligibleAt());
            why = record.state().json() + " by pid " + record.holder().pid() + " at fence " + record.fence()
                    + ", whose end cannot be proven: " + undecided.why()
                    + undecided.eligibleAt().map(at -> " (eligible at " + Records.timestamp(at) + ")").orElse("")
                    + "; wait and try again (--wait), run this as the reserver's user or as root, or once you know"
                    + " the holder is gone: proclive lease break " + record.name();
            code = ExitCode.UNKNOWN.code();
        }
        if (toStdout && !printFence) {
            out.println(json);
        }
        // Why, on stderr, whatever stdout got: a script that only looks at the exit code still shows the person why.
        Say.line(err, "lease " + record.name() + " is " + (code == ExitCode.UNKNOWN.code() ? "undecided" : "not granted")
                + ": " + why);
        return code;
    }

    /**
     * Asks for lease {@code name} at once, and when the answer is one a wait may change, says (one
     * line on stderr) that it waits, how long and for whom, then asks again waiting what is left of
     * {@code wait}; a wait that ends without the lease says it waited. {@code ask} takes the wait;
     * {@code refusal} reads what it answered: the refusal, or null when it got the lease.
     */
    <T> T waiting(String name, Duration wait, Ask<T> ask, java.util.function.Function<T, Acquisition> refusal)
            throws IOException {
        long start = System.nanoTime();
        T first = ask.with(Duration.ZERO);
        Acquisition a = refusal.apply(first);
        if (wait.isZero() || a == null || !waitable(a)) {
            return first;
        }
        Say.line(err, "waiting up to " + Say.seconds(wait) + " for lease " + name + ": " + whom(a));
        Duration left = wait.minusNanos(System.nanoTime() - start);
        T last = ask.with(left.isNegative() ? Duration.ZERO : left);
        Acquisition after = refusal.apply(last);
        if (after instanceof Acquisition.Held || after instanceof Acquisition.Undecided) {
            // the whole wait, or less when a wait could no longer change the answer (an undecided end it cannot prove)
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            Say.line(err, "gave up waiting for lease " + name + " after " + Say.seconds(
                    waited.plusMillis(100).compareTo(wait) >= 0 ? wait : Duration.ofMillis(waited.toMillis() / 100 * 100)));
        }
        return last;
    }

    /** A request for a lease that waits up to the time it is given. */
    interface Ask<T> {
        T with(Duration wait) throws IOException;
    }

    /** Whether a wait may change what {@code a} says: a live holder (or a waiter ahead), or an undecided end a wait may prove. */
    private static boolean waitable(Acquisition a) {
        return a instanceof Acquisition.Held || a instanceof Acquisition.Undecided u
                && (u.eligibleAt().isPresent() || u.verdict().liveness() == Liveness.DEAD);
    }

    /** For whom a wait waits, as {@code acquisition} says it. */
    private static String whom(Acquisition a) {
        LeaseRecord r = a instanceof Acquisition.Held held ? held.record() : ((Acquisition.Undecided) a).record();
        String holder = Say.process(r.holder()) + " at fence " + r.fence();
        if (a instanceof Acquisition.Held held) {
            return r.granted() && held.verdict().liveness() == Liveness.ALIVE ? r.state().json() + " by " + holder
                    : "free, and served in order: " + held.verdict().detail();
        }
        return r.state().json() + " by " + holder + ", whose end cannot be proven yet";
    }
}
