package dev.proclive.lease;

import dev.proclive.Identity;
import dev.proclive.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A lease's record as it is on disk ({@code NAME.lease}), one JSON object:
 * <pre>{@code
 * {"name":"build","fence":7,"state":"held","holder":{IDENTITY},"writer":{IDENTITY},
 *  "acquiredAt":"2026-11-29T10:00:00.000Z","renewedAt":"…","ttlMillis":30000,
 *  "previous":{"fence":6,"holder":{IDENTITY},"liveness":"dead","reason":"exited","detail":"…",
 *              "at":"…","renewedAt":"…"},
 *  "tokenDigest":"…","reserverUid":1000,"adoptedBy":"token","startedAfter":"…","cgroup":"…",
 *  "cgroupId":"4026531835:2817",
 *  "ended":{"how":"exited","at":"…","liveness":"dead","reason":"exited","exitCode":0}}
 * }</pre>
 * Timestamps are ISO-8601 UTC instants with millisecond precision; unknown fields are ignored on read, and records of
 * earlier versions still read (one with a {@code "token"} as its digest). The token itself is never written: a record
 * in a shared directory is readable by others, and whoever knows the token can make a process carry it.
 *
 * @param name         the lease's name
 * @param fence        the fence of the grant this record belongs to: it only grows
 * @param state        held, released or reserved
 * @param holder       the process the lease is (or was) held for; of a reservation, its reserver
 * @param writer       the process that wrote this record (a hook may write for its owner)
 * @param acquiredAt   when this fence was granted
 * @param renewedAt    when last granted or renewed by a record write (a grant its store keeps stays fresh longer)
 * @param ttl          how long the holder promised to stay fresh after {@code renewedAt}
 * @param previous     the holder this grant took the lease over from, and why, if it did
 * @param tokenDigest  the reservation's token as SHA-256, 64 lowercase hex digits: on a reservation and the grant it
 *                     was handed off to
 * @param reserverUid  the user the reservation's process runs as (that of the process that made it): a process of
 *                     another user that carries the token is never its holder
 * @param adoptedBy    how a reservation found its holder, if not handed off: {@code "token"} (a scan found the process
 *                     carrying its token), {@code "subreaper"} (its command ended and left this process behind),
 *                     {@code "cgroup"} (a member of its cgroup)
 * @param startedAfter a start fingerprint no later than that of any process started after the reservation: a scan for
 *                     its token skips older processes
 * @param ended        how this grant ended, if it did
 * @param cgroup       the cgroup (v2) directory, as its maker saw it, the reservation's command was started in where
 *                     one could be made, named from before anything entered it until it is removed: its members are
 *                     what of the command stayed inside
 * @param cgroupId     what tells that cgroup apart from another at its path, as {@code "NAMESPACE:INODE"} (cgroup
 *                     namespace and directory inode); only with a {@code cgroup}, and empty in older records
 */
public record LeaseRecord(String name, long fence, State state, Identity holder, Identity writer,
                          Instant acquiredAt, Instant renewedAt, Duration ttl, Optional<Takeover> previous,
                          Optional<String> tokenDigest, OptionalLong reserverUid, Optional<String> adoptedBy,
                          Optional<String> startedAfter, Optional<Ending> ended, Optional<String> cgroup,
                          Optional<String> cgroupId) {

    public enum State {
        /** Granted and not released. */
        HELD,
        /** Released by its holder, or broken by an operator: anyone may take it, with the next fence. */
        RELEASED,
        /** Granted, with its fence, to a process about to start; its holder is the reserver. */
        RESERVED;

        /** The word in the JSON: {@code held}, {@code released}, {@code reserved}. */
        public String json() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * The holder a grant took over from.
     *
     * @param fence     the fence that holder had
     * @param holder    that holder
     * @param verdict   the verdict that allowed the takeover (DEAD, or UNKNOWN past its TTL)
     * @param at        when it was taken over
     * @param renewedAt when that holder had last renewed, if the record said (older records do not)
     */
    public record Takeover(long fence, Identity holder, Verdict verdict, Instant at, Optional<Instant> renewedAt) {
        /** @throws NullPointerException if an argument is null */
        public Takeover {
            Objects.requireNonNull(holder, "holder");
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(at, "at");
            Objects.requireNonNull(renewedAt, "renewedAt");
        }
    }

    /**
     * How a grant ended, with the holder's verdict then: a {@code broken} lease whose holder was ALIVE shows as such.
     *
     * @param how      released, broken, exited or spawn_failed
     * @param at       when
     * @param verdict  the holder's verdict then
     * @param exitCode the holder's exit status, when it is known (a child this process started)
     */
    public record Ending(LeaseChange how, Instant at, Verdict verdict, OptionalLong exitCode) {
        /**
         * @throws NullPointerException     if an argument is null
         * @throws IllegalArgumentException if {@code how} is not a way a record ends
         */
        public Ending {
            Objects.requireNonNull(how, "how");
            if (!how.endsARecord()) {
                throw new IllegalArgumentException("a record ends released, broken, exited or spawn_failed, not " + how.json());
            }
            Objects.requireNonNull(at, "at");
            Objects.requireNonNull(verdict, "verdict");
            Objects.requireNonNull(exitCode, "exitCode");
        }

    }

    /**
     * @throws NullPointerException     if an argument is null
     * @throws IllegalArgumentException if it has a {@code cgroupId} without a {@code cgroup}
     */
    public LeaseRecord {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(holder, "holder");
        Objects.requireNonNull(writer, "writer");
        Objects.requireNonNull(acquiredAt, "acquiredAt");
        Objects.requireNonNull(renewedAt, "renewedAt");
        Objects.requireNonNull(ttl, "ttl");
        Objects.requireNonNull(previous, "previous");
        Objects.requireNonNull(tokenDigest, "tokenDigest");
        Objects.requireNonNull(reserverUid, "reserverUid");
        Objects.requireNonNull(adoptedBy, "adoptedBy");
        Objects.requireNonNull(startedAfter, "startedAfter");
        Objects.requireNonNull(ended, "ended");
        Objects.requireNonNull(cgroup, "cgroup");
        Objects.requireNonNull(cgroupId, "cgroupId");
        if (cgroupId.isPresent() && cgroup.isEmpty()) {
            throw new IllegalArgumentException("a cgroupId names a cgroup: there is none");
        }
    }

    /** A record without a cgroup. */
    public LeaseRecord(String name, long fence, State state, Identity holder, Identity writer, Instant acquiredAt,
                       Instant renewedAt, Duration ttl, Optional<Takeover> previous, Optional<String> tokenDigest,
                       OptionalLong reserverUid, Optional<String> adoptedBy, Optional<String> startedAfter,
                       Optional<Ending> ended) {
        this(name, fence, state, holder, writer, acquiredAt, renewedAt, ttl, previous, tokenDigest, reserverUid,
                adoptedBy, startedAfter, ended, Optional.empty(), Optional.empty());
    }

    /** A record without a reservation's fields or an ending. */
    public LeaseRecord(String name, long fence, State state, Identity holder, Identity writer, Instant acquiredAt,
                       Instant renewedAt, Duration ttl, Optional<Takeover> previous) {
        this(name, fence, state, holder, writer, acquiredAt, renewedAt, ttl, previous, Optional.empty(),
                OptionalLong.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    }

    /** Whether the lease is held (not released, not reserved). */
    public boolean held() {
        return state == State.HELD;
    }

    /** Whether the lease is held or reserved: granted, and not ended. */
    public boolean granted() {
        return state != State.RELEASED;
    }

    /** {@code renewedAt + ttl}: until when the record alone says it is fresh (its keeper may keep it fresh longer). */
    public Instant freshUntil() {
        return renewedAt.plus(ttl);
    }
}
