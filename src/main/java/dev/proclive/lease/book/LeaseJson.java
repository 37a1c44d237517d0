package dev.proclive.lease.book;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import dev.proclive.Identity;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.text.IdentityStream;
import dev.proclive.text.OneLine;
import dev.proclive.text.StrictJson;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Codec of records and queue lines, streaming only: an {@code ObjectMapper} cost half a command's start. A record not
 * saying exactly what it must is corrupt, never guessed at: a guessed holder or fence admits a second writer.
 */
public final class LeaseJson {

    /** What a reader takes of a record, in bytes: {@link #stored} writes none larger, so none is written unreadable. */
    public static final int MAX_RECORD_BYTES = 1 << 20;

    /**
     * What one identity may take as JSON ({@link #bounded}): a record holds up to three and verdicts quoting them, and
     * one it was granted in must still fit once ended, broken or taken over. A process's own is a few hundred bytes.
     */
    public static final int MAX_IDENTITY_BYTES = 16 << 10;

    /**
     * {@code who}, if it takes at most {@link #MAX_IDENTITY_BYTES} as JSON.
     *
     * @throws IOException naming lease {@code name} and {@code role} if it takes more, before anything is written
     */
    public static Identity bounded(String name, String role, Identity who) throws IOException {
        int bytes = IdentityStream.json(who).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (bytes > MAX_IDENTITY_BYTES) {
            throw new IOException("lease " + name + ": the " + role + "'s identity takes " + bytes + " bytes as JSON, more"
                    + " than the " + MAX_IDENTITY_BYTES + " a record keeps for one");
        }
        return who;
    }

    /** One line, as written to disk. */
    public static String write(LeaseRecord r) {
        return write(r, Optional.empty(), Optional.empty());
    }

    /** With a holder's {@code "verdict"} and {@code "eligibleAt"} when given, as {@code lease show} prints them. */
    public static String write(LeaseRecord r, Optional<Verdict> verdict, Optional<Instant> eligibleAt) {
        java.io.StringWriter text = new java.io.StringWriter(1024);
        try (JsonGenerator g = IdentityStream.FACTORY.createGenerator(text)) {
            g.writeStartObject();
            fields(g, r);
            if (verdict.isPresent()) {
                g.writeObjectFieldStart("verdict");
                g.writeStringField("liveness", verdict.get().liveness().json());
                g.writeStringField("reason", verdict.get().reason().json());
                g.writeEndObject();
            }
            text(g, "eligibleAt", eligibleAt.map(Records::timestamp));
            g.writeEndObject();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /**
     * The record as a book stores it: one line of UTF-8.
     *
     * @throws IOException if it would hold more than {@link #MAX_RECORD_BYTES} (a holder's identity of a megabyte),
     *                     before anything is written: a record nobody can read would shut its lease until broken
     */
    public static byte[] stored(LeaseRecord r) throws IOException {
        byte[] bytes = (write(r) + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (bytes.length > MAX_RECORD_BYTES) {
            throw new IOException("lease " + r.name() + ": its record would hold " + bytes.length + " bytes, more than the "
                    + MAX_RECORD_BYTES + " bytes a reader takes; the identities in it are too large");
        }
        return bytes;
    }

    private static void fields(JsonGenerator g, LeaseRecord r) throws IOException {
        g.writeStringField("name", r.name());
        g.writeNumberField("fence", r.fence());
        g.writeStringField("state", r.state().json());
        g.writeFieldName("holder");
        IdentityStream.write(g, r.holder());
        g.writeFieldName("writer");
        IdentityStream.write(g, r.writer());
        g.writeStringField("acquiredAt", Records.timestamp(r.acquiredAt()));
        g.writeStringField("renewedAt", Records.timestamp(r.renewedAt()));
        g.writeNumberField("ttlMillis", r.ttl().toMillis());
        if (r.previous().isPresent()) {
            LeaseRecord.Takeover p = r.previous().get();
            g.writeObjectFieldStart("previous");
            g.writeNumberField("fence", p.fence());
            g.writeFieldName("holder");
            IdentityStream.write(g, p.holder());
            verdict(g, p.verdict());
            g.writeStringField("at", Records.timestamp(p.at()));
            text(g, "renewedAt", p.renewedAt().map(Records::timestamp));
            g.writeEndObject();
        }
        text(g, "tokenDigest", r.tokenDigest());
        if (r.reserverUid().isPresent()) {
            g.writeNumberField("reserverUid", r.reserverUid().getAsLong());
        }
        text(g, "adoptedBy", r.adoptedBy());
        text(g, "startedAfter", r.startedAfter());
        if (r.cgroup().isPresent()) {
            g.writeStringField("cgroup", r.cgroup().get());
            text(g, "cgroupId", r.cgroupId());
        }
        if (r.ended().isPresent()) {
            LeaseRecord.Ending e = r.ended().get();
            g.writeObjectFieldStart("ended");
            g.writeStringField("how", e.how().json());
            g.writeStringField("at", Records.timestamp(e.at()));
            verdict(g, e.verdict());
            if (e.exitCode().isPresent()) {
                g.writeNumberField("exitCode", e.exitCode().getAsLong());
            }
            g.writeEndObject();
        }
    }

    private static void text(JsonGenerator g, String field, Optional<String> value) throws IOException {
        if (value.isPresent()) {
            g.writeStringField(field, value.get());
        }
    }

    private static void verdict(JsonGenerator g, Verdict v) throws IOException {
        g.writeStringField("liveness", v.liveness().json());
        g.writeStringField("reason", v.reason().json());
        g.writeStringField("detail", v.detail());
    }

    private LeaseJson() {
    }

    /** @throws LeaseCorruptException naming what is wrong, also when it is not lease {@code name}'s */
    public static LeaseRecord read(String name, byte[] bytes) throws LeaseCorruptException {
        JsonNode o;
        try {
            o = StrictJson.tree(bytes);
        } catch (IOException e) {
            throw new LeaseCorruptException(name, "the record is not JSON: " + firstLine(e), e);
        }
        if (o == null || !o.isObject()) {
            throw new LeaseCorruptException(name, "the record is not a JSON object");
        }
        String recordName = text(name, o, "name");
        if (!recordName.equals(name)) {
            throw new LeaseCorruptException(name, "the record names lease " + OneLine.quote(recordName));
        }
        long fence = number(name, o, "fence", 0);
        LeaseRecord.State state = state(name, text(name, o, "state"));
        Identity holder = identity(name, o, "holder");
        Identity writer = identity(name, o, "writer");
        Instant acquiredAt = time(name, o, "acquiredAt");
        Instant renewedAt = time(name, o, "renewedAt");
        long ttl = number(name, o, "ttlMillis", 1);
        Optional<LeaseRecord.Takeover> previous = Optional.empty();
        JsonNode p = object(name, o, "previous");
        if (p != null) {
            previous = Optional.of(new LeaseRecord.Takeover(number(name, p, "fence", 0), identity(name, p, "holder"),
                    verdict(name, p, "previous"), time(name, p, "at"), optionalTime(name, p, "renewedAt")));
        }
        Optional<String> digest = tokenDigest(name, o);
        if (state == LeaseRecord.State.RESERVED && digest.isEmpty()) {
            throw new LeaseCorruptException(name, "the record is reserved but carries no token digest");
        }
        OptionalLong reserverUid = optionalNumber(name, o, "reserverUid");
        if (reserverUid.isPresent() && (reserverUid.getAsLong() < 0 || reserverUid.getAsLong() > MAX_UID)) {
            throw new LeaseCorruptException(name, "\"reserverUid\" is " + reserverUid.getAsLong() + ", not a user id");
        }
        Optional<String> adoptedBy = optionalText(name, o, "adoptedBy");
        Optional<String> startedAfter = matching(name, o, "startedAfter", START_FLOOR,
                "not a start time (decimal clock ticks, or seconds.microseconds)");
        Optional<String> cgroupPath = matching(name, o, "cgroup", CGROUP,
                "not the absolute path of a cgroup this library made (…/proclive.NAME.STORE.HEX)");
        Optional<String> cgroupId = optionalText(name, o, "cgroupId");
        if (cgroupId.isPresent() && (cgroupPath.isEmpty() || !CGROUP_ID.test(cgroupId.get()))) {
            throw new LeaseCorruptException(name, "\"cgroupId\" is " + OneLine.quote(cgroupId.get())
                    + (cgroupPath.isEmpty() ? " without a \"cgroup\"" : ", not NAMESPACE:INODE (two decimal numbers)"));
        }
        Optional<LeaseRecord.Ending> ended = Optional.empty();
        JsonNode e = object(name, o, "ended");
        if (e != null) {
            ended = Optional.of(new LeaseRecord.Ending(how(name, text(name, e, "how")), time(name, e, "at"),
                    verdict(name, e, "ended"), optionalNumber(name, e, "exitCode")));
        }
        consistent(name, acquiredAt, previous, ended);
        return new LeaseRecord(name, fence, state, holder, writer, acquiredAt, renewedAt, Duration.ofMillis(ttl),
                previous, digest, reserverUid, adoptedBy, startedAfter, ended, cgroupPath, cgroupId);
    }

    public static String waiter(LeaseBook.Waiter w) {
        java.io.StringWriter text = new java.io.StringWriter(256);
        try (JsonGenerator g = IdentityStream.FACTORY.createGenerator(text)) {
            g.writeStartObject();
            g.writeStringField("until", Records.timestamp(w.until()));
            g.writeFieldName("who");
            IdentityStream.write(g, w.who());
            if (!w.by().equals(w.who())) {
                g.writeFieldName("by");
                IdentityStream.write(g, w.by());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /** A line without {@code by} (older tickets) is {@code who}'s own. */
    public static LeaseBook.Waiter waiter(String line) throws IOException {
        JsonNode o = StrictJson.tree(line.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        if (o == null || !o.isObject() || !o.path("who").isObject()
                || (o.has("by") && !o.get("by").isObject())) {
            throw new IOException("not a waiter: " + OneLine.quote(line));
        }
        try {
            Identity who = identity(o.get("who"));
            return new LeaseBook.Waiter(who, o.has("by") ? identity(o.get("by")) : who,
                    Instant.parse(o.path("until").asText()));
        } catch (DateTimeParseException | IllegalArgumentException e) {
            throw new IOException("not a waiter: " + OneLine.quote(line), e);
        }
    }

    /** Absolute, no {@code .} or {@code ..} steps, the last one {@code proclive.NAME.STORE.HEX} (older: no STORE). */
    private static final Predicate<String> CGROUP = Pattern.compile(
            "(/(?!\\.\\.?/)[^/\\x00\\n]+)*/proclive\\.[A-Za-z0-9_][A-Za-z0-9._-]{0,127}(\\.[0-9a-f]{8})?\\.[0-9a-f]{12}")
            .asMatchPredicate();

    /** The inode of the cgroup's namespace, and of its directory. */
    private static final Predicate<String> CGROUP_ID = Pattern.compile("[0-9]{1,20}:[0-9]{1,20}").asMatchPredicate();

    /** uid_t is 32 bits; (uid_t)-1 means none. */
    private static final long MAX_UID = 0xFFFF_FFFEL;

    /** Linux clock ticks, or macOS seconds.microseconds. */
    private static final Predicate<String> START_FLOOR = Pattern.compile("[0-9]{1,18}(\\.[0-9]{6})?")
            .asMatchPredicate();

    private static final Predicate<String> DIGEST = Pattern.compile("[0-9a-f]{64}").asMatchPredicate();

    /** {@code tokenDigest}, or the digest of {@code token} an earlier version wrote; both present must agree. */
    private static Optional<String> tokenDigest(String name, JsonNode o) throws LeaseCorruptException {
        Optional<String> digest = matching(name, o, "tokenDigest", DIGEST, "not 64 lowercase hex digits");
        Optional<String> token = matching(name, o, "token", Records::isToken, "not 32 lowercase hex digits");
        if (token.isEmpty()) {
            return digest;
        }
        String fromToken = Records.digest(token.get());
        if (digest.isPresent() && !digest.get().equals(fromToken)) {
            throw new LeaseCorruptException(name, "\"token\" and \"tokenDigest\" disagree");
        }
        return Optional.of(fromToken);
    }

    /** Evidence that contradicts itself is no evidence. */
    private static void consistent(String name, Instant acquiredAt, Optional<LeaseRecord.Takeover> previous, Optional<LeaseRecord.Ending> ended)
            throws LeaseCorruptException {
        if (previous.isPresent() && previous.get().renewedAt().isPresent()
                && previous.get().renewedAt().get().isAfter(previous.get().at())) {
            throw new LeaseCorruptException(name, "\"previous.renewedAt\" is after \"previous.at\": the holder taken "
                    + "over renewed after it was taken over");
        }
        LeaseRecord.Ending end = ended.orElse(null);
        if (end != null && end.at().isBefore(acquiredAt)) {
            throw new LeaseCorruptException(name, "\"ended.at\" is before \"acquiredAt\": the grant ended before it"
                    + " began");
        }
        if (end != null && end.exitCode().isPresent() && end.how() != LeaseChange.EXITED) {
            throw new LeaseCorruptException(name, "\"ended.exitCode\" is given for a grant that ended as "
                    + end.how().json() + ", not exited");
        }
    }

    private static LeaseRecord.State state(String name, String word) throws LeaseCorruptException {
        for (LeaseRecord.State s : LeaseRecord.State.values()) {
            if (s.json().equals(word)) {
                return s;
            }
        }
        throw new LeaseCorruptException(name, "\"state\" is " + OneLine.quote(word) + ", not held, released or reserved");
    }

    private static LeaseChange how(String name, String word) throws LeaseCorruptException {
        for (LeaseChange h : LeaseChange.values()) {
            if (h.endsARecord() && h.json().equals(word)) {
                return h;
            }
        }
        throw new LeaseCorruptException(name, "\"ended.how\" is " + OneLine.quote(word)
                + ", not released, broken, exited or spawn_failed");
    }

    private static Verdict verdict(String name, JsonNode o, String where) throws LeaseCorruptException {
        String word = text(name, o, "reason");
        Reason reason = Reason.fromJson(word).orElseThrow(() -> new LeaseCorruptException(name,
                "\"reason\" " + OneLine.quote(word) + " is no reason proclive gives"));
        String liveness = text(name, o, "liveness");
        if (!liveness.equals(reason.liveness().json())) {
            throw new LeaseCorruptException(name, "\"" + where + "\" says " + OneLine.quote(liveness) + " for reason "
                    + reason.json());
        }
        JsonNode detail = o.get("detail");
        return Verdict.of(reason, detail != null && detail.isTextual() ? detail.asText() : "");
    }

    /** Null when absent or JSON null. */
    private static JsonNode object(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isObject()) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is not an object");
        }
        return v;
    }

    private static String text(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || !v.isTextual()) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is missing or not a string");
        }
        return v.asText();
    }

    private static Optional<String> optionalText(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isTextual()) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is not a string");
        }
        return Optional.of(v.asText());
    }

    /** {@code not}: what the error says the text is not, where {@code shape} refuses it. */
    private static Optional<String> matching(String name, JsonNode o, String field, Predicate<String> shape, String not)
            throws LeaseCorruptException {
        Optional<String> v = optionalText(name, o, field);
        if (v.isPresent() && !shape.test(v.get())) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is " + OneLine.quote(v.get()) + ", " + not);
        }
        return v;
    }

    private static long number(String name, JsonNode o, String field, long min) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is missing or not a whole number of at least " + min);
        }
        return v.asLong();
    }

    private static OptionalLong optionalNumber(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || v.isNull()) {
            return OptionalLong.empty();
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is not a whole number");
        }
        return OptionalLong.of(v.asLong());
    }

    private static Identity identity(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || !v.isObject()) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is missing or not an identity");
        }
        Identity id;
        try {
            id = identity(v);
        } catch (IOException e) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is not an identity: " + firstLine(e), e);
        }
        if (id.pid() <= 0) {
            throw new LeaseCorruptException(name, "\"" + field + "\" names no pid");
        }
        return id;
    }

    private static Identity identity(JsonNode object) throws IOException {
        try (JsonParser p = object.traverse()) {
            return IdentityStream.read(p, p.nextToken()).orElseThrow();
        }
    }

    private static Instant time(String name, JsonNode o, String field) throws LeaseCorruptException {
        String t = text(name, o, field);
        Instant at;
        try {
            at = Instant.parse(t);
        } catch (DateTimeParseException e) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is not an ISO-8601 instant: " + OneLine.quote(t), e);
        }
        if (!Records.recordable(at)) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is " + OneLine.quote(t)
                    + ", outside the years 0000 to 9999 a record can hold");
        }
        return at;
    }

    private static Optional<Instant> optionalTime(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        return v == null || v.isNull() ? Optional.empty() : Optional.of(time(name, o, field));
    }

    /** A parser's message may quote what it read: escaped, so it stays one line. */
    private static String firstLine(Exception e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        String quoted = OneLine.quote(nl < 0 ? m : m.substring(0, nl));
        return quoted.substring(1, quoted.length() - 1);
    }
}
