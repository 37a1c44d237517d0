package dev.proclive.spi.internal;

import dev.proclive.spi.ProcessIntrospector;
import java.util.Optional;

/**
 * What this library's own backends read beyond one process's facts: program names for the owner
 * walk, other processes' environments for the lease's token scan, and exit events for the exit
 * watch. Inside the module, not exported: a platform plugged in through {@link ProcessIntrospector}
 * alone gets the defaults (names unknown, scans incomplete, watches that poll).
 */
public interface KernelIntrospector extends ProcessIntrospector {

    /** {@code introspector} as one of these: itself when it is one, else one that answers with the defaults. */
    static KernelIntrospector of(ProcessIntrospector introspector) {
        if (introspector instanceof KernelIntrospector k) {
            return k;
        }
        return new Defaults(introspector);
    }

    /**
     * Whether {@code text[from, to)} is a whole number as C's {@code %d} and {@code %llu} write it:
     * 1 to {@code maxDigits} ASCII digits, no sign, no blank, no leading zero ({@code 0} itself
     * aside). A start fingerprint a platform writes this way is compared as text, so one spelled
     * otherwise ({@code 0285663} for {@code 285663}) was never written by that platform and proves
     * nothing: {@link ProcessIntrospector#isFingerprint} says no to it, never "another start".
     * Pure, for every platform's {@code isFingerprint}.
     */
    static boolean isPlainDecimal(String text, int from, int to, int maxDigits) {
        if (from < 0 || to > text.length() || to <= from || to - from > maxDigits) {
            return false;
        }
        if (text.charAt(from) == '0' && to - from > 1) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /**
     * The executable's and {@code argv[0]}'s file names of process {@code pid}, for an owner walk
     * that meets a process whose short name is not already skipped. The default knows none.
     */
    default ProgramNames programNames(long pid) {
        return ProgramNames.UNKNOWN;
    }

    /**
     * Whether the file name of process {@code pid}'s executable or of its {@code argv[0]}, as
     * {@link #programNames} gives them, is one of {@code names}: what an owner walk asks of a process
     * whose short name is not skipped. The default asks {@link #programNames}; a platform may answer
     * without making a {@link ProgramNames} (one class fewer in a hook's cold JVM).
     */
    default boolean programNamedAnyOf(long pid, String[] names) {
        ProgramNames p = programNames(pid);
        for (String name : names) {
            if (!name.isEmpty() && (name.equals(p.executable()) || name.equals(p.argv0()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * This host's processes whose initial environment holds {@code variable} with a value
     * {@code value} accepts, skipping those whose start fingerprint is below {@code startedAfter}
     * (a {@link #startFloor()}) when one is given. A carrier counts only if it runs as user
     * {@code uid}: one of another user makes the scan incomplete, never a carrier.
     *
     * <p>The answer is a proof, not a glance: a process listed and then found ended (gone before
     * it was read, or a zombie) may have forked a carrier after the listing, so such a pass proves
     * nothing, and the scan passes again, a bounded number of times; still inconclusive, it is
     * incomplete with {@link EnvironmentScan#passAgain()} ({@link EnvironmentScan#asProof} makes the
     * passes). The default cannot read environments:
     * an incomplete scan.
     */
    default EnvironmentScan scanEnvironments(String variable, java.util.function.Predicate<String> value, long uid,
                                             Optional<String> startedAfter) {
        return EnvironmentScan.incomplete("this platform cannot read other processes' environments");
    }

    /**
     * Whether process {@code pid}'s initial environment holds {@code variable} with a value
     * {@code value} accepts: a complete scan of that one process, which lists it when it does; an
     * incomplete one when it cannot be read, or reads empty (a process between the two halves of an
     * exec reads so). The default cannot read environments.
     */
    default EnvironmentScan readEnvironment(long pid, String variable, java.util.function.Predicate<String> value) {
        return EnvironmentScan.incomplete("this platform cannot read other processes' environments");
    }

    /**
     * A new source of exit events for the exit watch, or empty when this platform has none (or it
     * cannot be opened now): then every watch polls. Called once, by the first watch made through
     * a checker over this introspector, so that what it loads (JNA) stays off the check path. The
     * default has none.
     */
    default Optional<ExitEvents> openExitEvents() {
        return Optional.empty();
    }

    /**
     * A start fingerprint no later than that of any process started from now on, or empty when
     * the platform cannot say: a scan for a reservation's token skips processes started before it. What only a lease asks,
     * as {@link #userId}: not part of the platform SPI.
     */
    default Optional<String> startFloor() {
        return Optional.empty();
    }

    /** The (effective) user id process {@code pid} runs as, or empty when it cannot be read. The default cannot. */
    default java.util.OptionalLong userId(long pid) {
        return java.util.OptionalLong.empty();
    }

    /** A plain introspector, with the defaults of everything above. */
    record Defaults(ProcessIntrospector inner) implements KernelIntrospector {
        @Override
        public dev.proclive.spi.ProcessLookup lookup(long pid) {
            return inner.lookup(pid);
        }

        @Override
        public dev.proclive.spi.ProcessLookup lookupProcess(long pid) {
            return inner.lookupProcess(pid);
        }

        @Override
        public dev.proclive.spi.ProcessLookup self() {
            return inner.self();
        }

        @Override
        public boolean sameStart(String recorded, String current) {
            return inner.sameStart(recorded, current);
        }

        @Override
        public boolean isFingerprint(String recorded) {
            return inner.isFingerprint(recorded);
        }

        @Override
        public boolean isBootId(String recorded) {
            return inner.isBootId(recorded);
        }

        @Override
        public Optional<String> bootId() {
            return inner.bootId();
        }

        @Override
        public Optional<String> hostName() {
            return inner.hostName();
        }

        @Override
        public Optional<String> machineId() {
            return inner.machineId();
        }

        @Override
        public Optional<String> pidNamespace() {
            return inner.pidNamespace();
        }

        @Override
        public boolean inInitialPidNamespace() {
            return inner.inInitialPidNamespace();
        }

        @Override
        public boolean supported() {
            return inner.supported();
        }

        @Override
        public boolean nameMatches(String processName, String name) {
            return inner.nameMatches(processName, name);
        }
    }
}
