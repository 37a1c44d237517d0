package dev.proclive.cli;

import dev.proclive.Liveness;
import dev.proclive.Reason;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.Records;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseRecord;
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
                    : !record.granted() && held.verdict().detail().startsWith(dev.proclive.lease.book.LeaseNames.NO_RECORD)
                    ? "free at fence " + record.fence() + ", with " + held.verdict().detail()
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
                    + "; wait and try again (--wait)" + whereToLook(record, undecided.verdict().reason())
                    + ", or once you know the holder is gone: proclive lease break " + record.name();
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

    /** Where the holder's end could be proven, if the reason says: {@code ", run this …"}, or nothing. */
    private static String whereToLook(LeaseRecord record, Reason reason) {
        String whose = record.state() == LeaseRecord.State.RESERVED ? "reserver's" : "holder's";
        if (reason == Reason.ACCESS_DENIED) {
            return ", run this as the " + whose + " user or as root";
        }
        if (reason.liveness() == Liveness.DEAD) { // its token's scan was cut short
            return ", run this as the " + whose + " user or as root if other users' processes cut the scan short";
        }
        if (reason == Reason.OTHER_PID_NAMESPACE) {
            return ", run this in the " + whose + " PID namespace";
        }
        if (reason == Reason.OTHER_HOST) {
            return ", run this on the " + whose + " host";
        }
        return "";
    }

    /**
     * Asks for lease {@code name}, waiting up to {@code wait}; when the lease is held as the wait
     * begins (a look at its record, {@code look}, taking no lock) says so first, one line on stderr:
     * that it waits, how long and for whom. A wait that ends without the lease says it waited.
     * {@code ask} takes the wait; {@code refusal} reads what it answered: the refusal, or null when
     * it got the lease. The lease is asked for once, with the whole wait, so that the lease's lock
     * too is waited for within the wait, and for no more.
     */
    <T> T waiting(String name, Duration wait, Look look, Ask<T> ask, java.util.function.Function<T, Acquisition> refusal)
            throws IOException {
        long start = System.nanoTime();
        if (!wait.isZero()) {
            whom(look).ifPresent(w -> Say.line(err, "waiting up to " + Say.seconds(wait) + " for lease " + name + ": " + w));
        }
        T last = ask.with(wait);
        Acquisition after = refusal.apply(last);
        if (!wait.isZero() && (after instanceof Acquisition.Held || after instanceof Acquisition.Undecided)) {
            // the whole wait, or less when a wait could no longer change the answer (an undecided end it cannot prove)
            // a clock seen going back (libfaketime steps the monotonic one too) measured nothing: the whole wait
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            Say.line(err, "gave up waiting for lease " + name + " after " + Say.seconds(
                    waited.isNegative() || waited.plusMillis(100).compareTo(wait) >= 0 ? wait
                            : Duration.ofMillis(waited.toMillis() / 100 * 100)));
        }
        return last;
    }

    /** A look at a lease's record, without its lock. */
    interface Look {
        Optional<LeaseRecord> record() throws IOException;
    }

    /**
     * For whom a wait will wait, as the record {@code look} finds says: its holder, unless the lease
     * is free or its holder is proven gone (then the lease is most likely granted at once); empty
     * when the record cannot be read now (the request that follows says why).
     */
    private static Optional<String> whom(Look look) {
        Optional<LeaseRecord> record;
        try {
            record = look.record();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        if (record.isEmpty() || !record.get().granted()) {
            return Optional.empty();
        }
        LeaseRecord r = record.get();
        dev.proclive.Verdict verdict = dev.proclive.ProcLive.explain(r.holder());
        String holder = r.state().json() + " by " + Say.process(r.holder()) + " at fence " + r.fence();
        return switch (verdict.liveness()) {
            case ALIVE -> Optional.of(holder);
            case UNKNOWN -> Optional.of(holder + ", whose end cannot be proven here (" + verdict.reason().json() + ")");
            case DEAD -> Optional.empty();
        };
    }

    /** A request for a lease that waits up to the time it is given. */
    interface Ask<T> {
        T with(Duration wait) throws IOException;
    }
}
