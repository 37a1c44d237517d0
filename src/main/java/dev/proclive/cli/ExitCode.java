package dev.proclive.cli;

import dev.proclive.Liveness;

/**
 * Every exit status the command line gives, in one table. Some share a number: what it means
 * depends on the command (1 is "dead" for {@code check}, "held" for {@code lease acquire}).
 */
enum ExitCode {
    /** Done; for {@code check}, alive. */
    OK(0),
    /** {@code check}: dead; {@code wait}: still alive at the timeout; {@code lease}: held by a live holder, or not this fence's. */
    NO(1),
    /** Unknown ({@code check}, {@code wait}); undecided ({@code lease}). */
    UNKNOWN(2),
    /** No identity, no live holder, no record. */
    NONE(3),
    /** Bad usage (sysexits EX_USAGE). */
    USAGE(64),
    /** Bad input: malformed JSON, a bad lease name, a corrupt record (EX_DATAERR). */
    BAD_INPUT(65),
    /** What nothing else caught (EX_SOFTWARE): a bug to report. */
    INTERNAL(70),
    /** An I/O failure (EX_IOERR). */
    IO_FAILURE(74),
    /** {@code lease run}: the command cannot be run, as a shell says it. */
    CANNOT_RUN(126),
    /** {@code lease run}: the command is not found, as a shell says it. */
    NOT_FOUND(127);

    private final int code;

    ExitCode(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }

    /** {@code check}'s status for a liveness: 0 alive, 1 dead, 2 unknown. */
    static int of(Liveness liveness) {
        return switch (liveness) {
            case ALIVE -> OK.code;
            case DEAD -> NO.code;
            case UNKNOWN -> UNKNOWN.code;
        };
    }
}
