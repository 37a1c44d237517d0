package dev.proclive.lease.book;

import dev.proclive.Identity;
import dev.proclive.lease.LeaseRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/** A record's named changes and its parts' text forms, kept off the API's {@link LeaseRecord}. Pure. */
public final class Records {

    private static final Pattern TOKEN = Pattern.compile("[0-9a-f]{32}");
    private static final Pattern FENCE = Pattern.compile("[0-9]{1,19}");
    private static final DateTimeFormatter INSTANT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);
    private static final Instant EARLIEST = Instant.parse("0000-01-01T00:00:00Z");
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    private Records() {
    }

    /** Every named change goes through this copy. */
    private static final class Draft {
        private final LeaseRecord r;
        long fence;
        LeaseRecord.State state;
        Identity holder;
        Identity writer;
        Instant acquiredAt;
        Instant renewedAt;
        Duration ttl;
        Optional<LeaseRecord.Takeover> previous;
        Optional<String> tokenDigest;
        OptionalLong reserverUid;
        Optional<String> adoptedBy;
        Optional<String> startedAfter;
        Optional<LeaseRecord.Ending> ended;
        Optional<String> cgroup;
        Optional<String> cgroupId;

        Draft(LeaseRecord r) {
            this.r = r;
            fence = r.fence();
            state = r.state();
            holder = r.holder();
            writer = r.writer();
            acquiredAt = r.acquiredAt();
            renewedAt = r.renewedAt();
            ttl = r.ttl();
            previous = r.previous();
            tokenDigest = r.tokenDigest();
            reserverUid = r.reserverUid();
            adoptedBy = r.adoptedBy();
            startedAfter = r.startedAfter();
            ended = r.ended();
            cgroup = r.cgroup();
            cgroupId = r.cgroupId();
        }

        LeaseRecord done() {
            return new LeaseRecord(r.name(), fence, state, holder, writer, acquiredAt, renewedAt, ttl, previous,
                    tokenDigest, reserverUid, adoptedBy, startedAfter, ended, cgroup, cgroupId);
        }
    }

    /** A new grant, over {@code previous} (a takeover's); its fence is the book's to give ({@link #fenced}). */
    public static LeaseRecord granted(String name, LeaseRecord.State state, Identity holder, Identity writer, Instant now,
                                      Duration ttl, Optional<LeaseRecord.Takeover> previous, Optional<String> tokenDigest,
                                      OptionalLong reserverUid, Optional<String> startedAfter) {
        return new LeaseRecord(name, 0, state, holder, writer, now, now, ttl, previous, tokenDigest, reserverUid,
                Optional.empty(), startedAfter, Optional.empty(), Optional.empty(), Optional.empty());
    }

    /** The next grant after {@code r}, to {@code holder}: a lease handed off, its reservation, cgroup and TTL kept. */
    public static LeaseRecord regranted(LeaseRecord r, Identity holder, Identity writer, Instant now) {
        Draft d = new Draft(r);
        d.fence = 0;
        d.state = LeaseRecord.State.HELD;
        d.holder = holder;
        d.writer = writer;
        d.acquiredAt = now;
        d.renewedAt = now;
        d.previous = Optional.empty();
        d.adoptedBy = Optional.empty();
        d.ended = Optional.empty();
        return d.done();
    }

    /** {@code r} at the fence its new grant was given when written. */
    public static LeaseRecord fenced(LeaseRecord r, long fence) {
        Draft d = new Draft(r);
        d.fence = fence;
        return d.done();
    }

    public static LeaseRecord renewed(LeaseRecord r, Identity writer, Instant now, Duration ttl) {
        Draft d = new Draft(r);
        d.writer = writer;
        d.renewedAt = now;
        d.ttl = ttl;
        return d.done();
    }

    /** Fence kept: asked again, a reservation claimed or handed on. */
    public static LeaseRecord handedTo(LeaseRecord r, LeaseRecord.State state, Identity holder, Identity writer,
                                       Instant now, Duration ttl) {
        Draft d = new Draft(r);
        d.state = state;
        d.holder = holder;
        d.writer = writer;
        d.renewedAt = now;
        d.ttl = ttl;
        d.ended = Optional.empty();
        return d.done();
    }

    public static LeaseRecord adoptedBy(LeaseRecord r, Identity carrier, String how, Identity writer, Instant now) {
        Draft d = new Draft(handedTo(r, LeaseRecord.State.HELD, carrier, writer, now, r.ttl()));
        d.adoptedBy = Optional.of(how);
        return d.done();
    }

    public static LeaseRecord ended(LeaseRecord r, Identity writer, LeaseRecord.Ending ending) {
        Draft d = new Draft(released(r, writer));
        d.ended = Optional.of(ending);
        return d.done();
    }

    /** A reservation broken before anything held it. */
    public static LeaseRecord released(LeaseRecord r, Identity writer) {
        Draft d = new Draft(r);
        d.state = LeaseRecord.State.RELEASED;
        d.writer = writer;
        return d.done();
    }

    public static LeaseRecord inCgroup(LeaseRecord r, Cgroup cgroup) {
        Draft d = new Draft(r);
        d.cgroup = Optional.of(cgroup.path());
        d.cgroupId = cgroup.id().isEmpty() ? Optional.empty() : Optional.of(cgroup.id());
        return d.done();
    }

    /** Handed to a process that never carried the token: its end is its holder's. */
    public static LeaseRecord withoutToken(LeaseRecord r) {
        Draft d = new Draft(r);
        d.tokenDigest = Optional.empty();
        d.reserverUid = OptionalLong.empty();
        d.startedAfter = Optional.empty();
        return d.done();
    }

    /** Whether two identities name the same process: everything but the name, which is for people. */
    public static boolean sameProcess(Identity a, Identity b) {
        return a.pid() == b.pid() && a.start().equals(b.start()) && a.boot().equals(b.boot())
                && a.host().equals(b.host()) && a.pidns().equals(b.pidns()) && a.machine().equals(b.machine());
    }

    public static boolean isToken(String token) {
        return token != null && TOKEN.matcher(token).matches();
    }

    /** What a record holds for a token. */
    public static String digest(String text) {
        try {
            byte[] sum = java.security.MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(sum);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    public static boolean hasToken(LeaseRecord r, String token) {
        return r.tokenDigest().isPresent() && isToken(token) && java.security.MessageDigest.isEqual(
                r.tokenDigest().get().getBytes(StandardCharsets.US_ASCII), digest(token).getBytes(StandardCharsets.US_ASCII));
    }

    /** A fence as the guard, record and command line write it: ASCII digits, no sign or space; else empty. */
    public static OptionalLong parseFence(String text) {
        if (!FENCE.matcher(text).matches()) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(text));
        } catch (NumberFormatException e) {
            return OptionalLong.empty(); // 19 digits above 2^63-1
        }
    }

    public static String timestamp(Instant at) {
        return INSTANT.format(at);
    }

    /** Years 0 to 9999: what every reader can hold and add a TTL to. */
    public static boolean recordable(Instant at) {
        return !at.isBefore(EARLIEST) && !at.isAfter(LATEST);
    }
}
