package dev.proclive.lease;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.proclive.Identity;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;

/**
 * The record's JSON, read strictly: a record that does not say exactly what it must is corrupt,
 * never guessed at (a guessed holder or fence is a second writer let in).
 */
final class LeaseJson {

    static final ObjectMapper MAPPER = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** The instants a record may hold: years 0 to 9999, which every reader can hold and add a TTL to. */
    private static final Instant EARLIEST = Instant.parse("0000-01-01T00:00:00Z");
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999Z");

    /** ISO-8601 UTC with milliseconds: {@code 2026-11-29T10:00:00.123Z}. */
    private static final DateTimeFormatter INSTANT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.ROOT).withZone(ZoneOffset.UTC);

    private LeaseJson() {
    }

    static String instant(Instant at) {
        return INSTANT.format(at);
    }

    static ObjectNode tree(LeaseRecord r) {
        ObjectNode o = MAPPER.createObjectNode();
        o.put("name", r.name());
        o.put("fence", r.fence());
        o.put("state", r.state().json());
        o.set("holder", MAPPER.valueToTree(r.holder()));
        o.set("writer", MAPPER.valueToTree(r.writer()));
        o.put("acquiredAt", instant(r.acquiredAt()));
        o.put("renewedAt", instant(r.renewedAt()));
        o.put("ttlMillis", r.ttl().toMillis());
        r.previous().ifPresent(p -> {
            ObjectNode prev = o.putObject("previous");
            prev.put("fence", p.fence());
            prev.set("holder", MAPPER.valueToTree(p.holder()));
            prev.put("liveness", p.verdict().liveness().name().toLowerCase(Locale.ROOT));
            prev.put("reason", p.verdict().reason().name().toLowerCase(Locale.ROOT));
            prev.put("detail", p.verdict().detail());
            prev.put("at", instant(p.at()));
        });
        return o;
    }

    static String write(LeaseRecord r) {
        try {
            return MAPPER.writeValueAsString(tree(r));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a lease record always serializes", e);
        }
    }

    /**
     * The record in {@code bytes}, which must be the record of lease {@code name}.
     *
     * @throws LeaseCorruptException naming what is wrong
     */
    static LeaseRecord read(String name, byte[] bytes) throws LeaseCorruptException {
        JsonNode o;
        try {
            o = MAPPER.readTree(bytes);
        } catch (IOException e) {
            throw new LeaseCorruptException(name, "the record is not JSON: " + firstLine(e), e);
        }
        if (o == null || !o.isObject()) {
            throw new LeaseCorruptException(name, "the record is not a JSON object");
        }
        String recordName = text(name, o, "name");
        if (!recordName.equals(name)) {
            throw new LeaseCorruptException(name, "the record names lease " + LeaseText.quote(recordName));
        }
        long fence = number(name, o, "fence", 0);
        String state = text(name, o, "state");
        LeaseRecord.State s;
        if (state.equals("held")) {
            s = LeaseRecord.State.HELD;
        } else if (state.equals("released")) {
            s = LeaseRecord.State.RELEASED;
        } else {
            throw new LeaseCorruptException(name, "\"state\" is " + LeaseText.quote(state) + ", not held or released");
        }
        Identity holder = identity(name, o, "holder");
        Identity writer = identity(name, o, "writer");
        Instant acquiredAt = time(name, o, "acquiredAt");
        Instant renewedAt = time(name, o, "renewedAt");
        long ttl = number(name, o, "ttlMillis", 1);
        Optional<LeaseRecord.Takeover> previous = Optional.empty();
        JsonNode p = o.get("previous");
        if (p != null && !p.isNull()) {
            if (!p.isObject()) {
                throw new LeaseCorruptException(name, "\"previous\" is not an object");
            }
            Reason reason = reason(name, text(name, p, "reason"));
            String liveness = text(name, p, "liveness");
            if (!liveness.equals(reason.liveness().name().toLowerCase(Locale.ROOT))) {
                throw new LeaseCorruptException(name, "\"previous\" says " + LeaseText.quote(liveness) + " for reason " + reason);
            }
            JsonNode detail = p.get("detail");
            previous = Optional.of(new LeaseRecord.Takeover(number(name, p, "fence", 0), identity(name, p, "holder"),
                    Verdict.of(reason, detail != null && detail.isTextual() ? detail.asText() : ""),
                    time(name, p, "at")));
        }
        return new LeaseRecord(name, fence, s, holder, writer, acquiredAt, renewedAt, Duration.ofMillis(ttl), previous);
    }

    private static String text(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || !v.isTextual()) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is missing or not a string");
        }
        return v.asText();
    }

    private static long number(String name, JsonNode o, String field, long min) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToLong() || v.asLong() < min) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is missing or not a whole number of at least " + min);
        }
        return v.asLong();
    }

    private static Identity identity(String name, JsonNode o, String field) throws LeaseCorruptException {
        JsonNode v = o.get(field);
        if (v == null || !v.isObject()) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is missing or not an identity");
        }
        try {
            Identity id = MAPPER.treeToValue(v, Identity.class);
            if (id.pid() <= 0) {
                throw new LeaseCorruptException(name, "\"" + field + "\" names no pid");
            }
            return id;
        } catch (JsonProcessingException e) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is not an identity: " + firstLine(e), e);
        }
    }

    private static Instant time(String name, JsonNode o, String field) throws LeaseCorruptException {
        String t = text(name, o, field);
        Instant at;
        try {
            at = Instant.parse(t);
        } catch (DateTimeParseException e) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is not an ISO-8601 instant: " + LeaseText.quote(t), e);
        }
        if (at.isBefore(EARLIEST) || at.isAfter(LATEST)) {
            throw new LeaseCorruptException(name, "\"" + field + "\" is " + LeaseText.quote(t)
                    + ", outside the years 0000 to 9999 a record can hold");
        }
        return at;
    }

    private static Reason reason(String name, String text) throws LeaseCorruptException {
        for (Reason r : Reason.values()) {
            if (r.name().toLowerCase(Locale.ROOT).equals(text)) {
                return r;
            }
        }
        throw new LeaseCorruptException(name, "\"reason\" " + LeaseText.quote(text) + " is no reason proclive gives");
    }

    /** The first line of a parser's message, which may quote what it read: escaped, so it stays one line. */
    private static String firstLine(Exception e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        String line = nl < 0 ? m : m.substring(0, nl);
        String quoted = LeaseText.quote(line);
        return quoted.substring(1, quoted.length() - 1);
    }

}
