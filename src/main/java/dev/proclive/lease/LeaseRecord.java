package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A lease's record as it is on disk ({@code NAME.lease}), one JSON object:
 * <pre>{@code
 * {"name":"build","fence":7,"state":"held","holder":{IDENTITY},"writer":{IDENTITY},
 *  "acquiredAt":"2026-11-29T10:00:00.000Z","renewedAt":"…","ttlMillis":30000,
 *  "previous":{"fence":6,"holder":{IDENTITY},"liveness":"dead","reason":"exited","detail":"…","at":"…"}}
 * }</pre>
 * Timestamps are ISO-8601 UTC instants with millisecond precision; unknown fields are ignored on
 * read; {@code previous} is present after a takeover.
 *
 * @param name       the lease's name
 * @param fence      the fence of the grant this record belongs to: it only grows
 * @param state      held or released
 * @param holder     the process the lease is (or was) held for
 * @param writer     the process that wrote this record (a hook may write for its owner)
 * @param acquiredAt when this fence was granted
 * @param renewedAt  when it was last granted or renewed
 * @param ttl        how long the holder promised to stay fresh after {@code renewedAt}
 * @param previous   the holder this grant took the lease over from, and why, if it did
 */
public record LeaseRecord(String name, long fence, State state, Identity holder, Identity writer,
                          Instant acquiredAt, Instant renewedAt, Duration ttl, Optional<Takeover> previous) {

    /** Whether a record's lease is held. */
    public enum State {
        /** Granted and not released. */
        HELD,
        /** Released by its holder, or broken by an operator: anyone may take it, with the next fence. */
        RELEASED;

        /** The word in the JSON: {@code held}, {@code released}. */
        public String json() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The holder a grant took over from.
     *
     * @param fence   the fence that holder had
     * @param holder  that holder
     * @param verdict the verdict that allowed the takeover (DEAD, or UNKNOWN past its TTL)
     * @param at      when it was taken over
     */
    public record Takeover(long fence, Identity holder, Verdict verdict, Instant at) {
        /** @throws NullPointerException if an argument is null */
        public Takeover {
            Objects.requireNonNull(holder, "holder");
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(at, "at");
        }
    }

    /** @throws NullPointerException if an argument is null */
    public LeaseRecord {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(writer, "writer");
        Objects.requireNonNull(acquiredAt, "acquiredAt");
        Objects.requireNonNull(renewedAt, "renewedAt");
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(previous, "previous");
    }

    /** Whether the lease is held (not released). */
    public boolean held() {
        return state == State.HELD;
    }

    /** {@code renewedAt + ttl}: until when the holder promised to stay fresh. */
    public Instant freshUntil() {
        return renewedAt.plus(ttl);
    }

    /**
     * A fence as the guard, the record and the command line write it: decimal ASCII digits, 0 to
     * 2<sup>63</sup>−1, nothing else (no sign, no space).
     *
     * @return the fence, or empty when {@code text} is not one
     */
    public static OptionalLong parseFence(String text) {
        if (text.isEmpty() || text.length() > 19) {
            return OptionalLong.empty();
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return OptionalLong.empty();
            }
        }
        try {
            return OptionalLong.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
            return OptionalLong.empty(); // 19 digits above 2^63-1
        }
    }

    /** An instant as records write it: ISO-8601 UTC with milliseconds, {@code 2026-11-29T10:00:00.123Z}. */
    public static String timestamp(Instant at) {
        return LeaseJson.instant(at);
    }

    /** The record as the one-line JSON object written to disk. */
    public String toJson() {
        return LeaseJson.write(this);
    }
}
