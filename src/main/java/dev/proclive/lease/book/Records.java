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

/**
 * What the engine and the books do with a record besides reading it: a record copied with what a
 * write changes, and the text forms a record's parts take (a token and its digest, a fence, an
 * instant). Beside the engine, not on the API's {@link LeaseRecord}. Pure.
 */
public final class Records {

    private static final Pattern TOKEN = Pattern.compile("[0-9a-f]{32}");
    private static final Pattern DIGEST = Pattern.compile("[0-9a-f]{64}");
    private static final DateTimeFormatter INSTANT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private Records() {
    }

    /** {@code r} in {@code state}, held by {@code holder}, written by {@code writer}, ended as {@code ended} says. */
    public static LeaseRecord with(LeaseRecord r, LeaseRecord.State state, Identity holder, Identity writer,
                                   Optional<LeaseRecord.Ending> ended) {
        return new LeaseRecord(r.name(), r.fence(), state, holder, writer, r.acquiredAt(), r.renewedAt(), r.ttl(),
                r.previous(), r.tokenDigest(), r.reserverUid(), r.adoptedBy(), r.startedAfter(), ended, r.cgroup());
    }

    /** {@code r} at another fence: the one a new grant was given when it was written. */
    public static LeaseRecord fenced(LeaseRecord r, long fence) {
        return new LeaseRecord(r.name(), fence, r.state(), r.holder(), r.writer(), r.acquiredAt(), r.renewedAt(), r.ttl(),
                r.previous(), r.tokenDigest(), r.reserverUid(), r.adoptedBy(), r.startedAfter(), r.ended(), r.cgroup());
    }

    /** {@code r} renewed at {@code now} for {@code ttl}, by {@code writer}. */
    public static LeaseRecord renewed(LeaseRecord r, Identity writer, Instant now, Duration ttl) {
        return new LeaseRecord(r.name(), r.fence(), r.state(), r.holder(), writer, r.acquiredAt(), now, ttl,
                r.previous(), r.tokenDigest(), r.reserverUid(), r.adoptedBy(), r.startedAfter(), r.ended(), r.cgroup());
    }

    /** {@code r}'s grant ended as {@code ending}: released, the fence kept. */
    public static LeaseRecord ended(LeaseRecord r, Identity writer, LeaseRecord.Ending ending) {
        return with(r, LeaseRecord.State.RELEASED, r.holder(), writer, Optional.of(ending));
    }

    /** {@code r} naming the cgroup its command runs in. */
    public static LeaseRecord inCgroup(LeaseRecord r, LeaseRecord.Cgroup cgroup) {
        return new LeaseRecord(r.name(), r.fence(), r.state(), r.holder(), r.writer(), r.acquiredAt(), r.renewedAt(),
                r.ttl(), r.previous(), r.tokenDigest(), r.reserverUid(), r.adoptedBy(), r.startedAfter(), r.ended(),
                Optional.of(cgroup));
    }

    /**
     * {@code r}, a reservation handed off to a process that never carried its token, with the token
     * retired (no digest, no reserver's user, no start floor), so that its end is its holder's.
     */
    public static LeaseRecord withoutToken(LeaseRecord r) {
        return new LeaseRecord(r.name(), r.fence(), r.state(), r.holder(), r.writer(), r.acquiredAt(), r.renewedAt(),
                r.ttl(), r.previous(), Optional.empty(), OptionalLong.empty(), r.adoptedBy(), Optional.empty(), r.ended(),
                r.cgroup());
    }

    /** Whether {@code token} is a token as reservations make them: 32 lowercase hex digits. */
    public static boolean isToken(String token) {
        return token != null && TOKEN.matcher(token).matches();
    }

    /** Whether {@code digest} is a token's digest as records hold it: 64 lowercase hex digits. */
    public static boolean isDigest(String digest) {
        return digest != null && DIGEST.matcher(digest).matches();
    }

    /**
     * The SHA-256 of {@code text}'s UTF-8 bytes, as 64 lowercase hex digits: what a record holds in
     * a token's place (a token is ASCII, so its bytes are the same either way).
     */
    public static String digest(String text) {
        try {
            byte[] sum = java.security.MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(sum);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** Whether {@code token} is the token {@code r}'s reservation was made with. */
    public static boolean hasToken(LeaseRecord r, String token) {
        return r.tokenDigest().isPresent() && isToken(token) && java.security.MessageDigest.isEqual(
                r.tokenDigest().get().getBytes(StandardCharsets.US_ASCII), digest(token).getBytes(StandardCharsets.US_ASCII));
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
        return INSTANT.format(at);
    }
}
