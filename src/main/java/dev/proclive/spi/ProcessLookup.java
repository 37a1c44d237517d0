package dev.proclive.spi;

import dev.proclive.Liveness;
import dev.proclive.Reason;
import java.util.Objects;

/**
 * The outcome of reading one process: {@link Found found}, proven {@link Gone gone}, or
 * {@link Unknown unknown} with a reason. Platforms must not report "gone" without proof: a process
 * that cannot be seen (a hidden {@code /proc}, a sandbox) is {@link Unknown} with
 * {@link Reason#ACCESS_DENIED}.
 */
public sealed interface ProcessLookup {

    /**
     * The process exists and was read.
     *
     * @param info what was read
     */
    record Found(ProcessInfo info) implements ProcessLookup {
        /** @throws NullPointerException if {@code info} is null */
        public Found {
            Objects.requireNonNull(info, "info");
        }
    }

    /**
     * No process has this id: proven, not guessed.
     *
     * @param detail what showed it, for people
     */
    record Gone(String detail) implements ProcessLookup {
        /** Turns a null detail into an empty one. */
        public Gone {
            detail = detail == null ? "" : detail;
        }
    }

    /**
     * The process could not be read; whether it exists is not known.
     *
     * @param reason why: one of the {@link Liveness#UNKNOWN} reasons, typically
     *               {@link Reason#ACCESS_DENIED}, {@link Reason#UNSUPPORTED_PLATFORM},
     *               {@link Reason#OTHER_PID_NAMESPACE} or {@link Reason#IO_ERROR}
     * @param detail what failed, for people
     */
    record Unknown(Reason reason, String detail) implements ProcessLookup {
        /**
         * @throws NullPointerException     if {@code reason} is null
         * @throws IllegalArgumentException if {@code reason} is not an UNKNOWN reason
         */
        public Unknown {
            Objects.requireNonNull(reason, "reason");
            if (reason.liveness() != Liveness.UNKNOWN) {
                throw new IllegalArgumentException(reason + " is not a reason for UNKNOWN");
            }
            detail = detail == null ? "" : detail;
        }
    }
}
