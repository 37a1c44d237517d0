package dev.proclive.text;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import dev.proclive.Identity;
import java.io.IOException;
import java.util.Optional;

/**
 * An {@link Identity} as JSON, read and written with jackson-core's streaming parser and generator,
 * by the rules its annotations give a plain {@code ObjectMapper} with {@code STRICT_DUPLICATE_DETECTION},
 * without building one (that alone is most of a short command's time). Reads: {@code pid} a whole
 * number within 64 bits or null; the other fields a JSON string or null; unknown fields skipped,
 * missing ones empty. Writes: the fields in their order, {@code pid} and {@code start} always, the
 * rest when not empty. The one streaming codec of an identity, for the command line and the lease
 * records alike.
 */
public final class IdentityStream {

    /** A repeated field is refused, never "the last one wins": {@code {"pid":1,"pid":2}} names no one process. */
    public static final JsonFactory FACTORY = new JsonFactory().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private IdentityStream() {
    }

    /**
     * The identity whose first token {@code first} is, read from {@code p}; empty for JSON {@code null}.
     *
     * @throws JsonParseException for JSON of another shape, with its location
     */
    public static Optional<Identity> read(JsonParser p, JsonToken first) throws IOException {
        if (first == JsonToken.VALUE_NULL) {
            return Optional.empty();
        }
        if (first != JsonToken.START_OBJECT) {
            throw new JsonParseException(p, "an identity is a JSON object, not " + describe(first));
        }
        long pid = 0;
        String[] strings = new String[6];
        for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
            String field = p.currentName();
            JsonToken value = p.nextToken();
            int index = stringIndex(field);
            if (field.equals("pid")) {
                pid = pid(p, value);
            } else if (index >= 0) {
                strings[index] = string(p, value);
            } else {
                p.skipChildren();
            }
        }
        return Optional.of(new Identity(pid, strings[0], strings[1], strings[2], strings[3], strings[4], strings[5]));
    }

    /** {@code id} as one JSON object, as a plain {@code ObjectMapper} writes it. */
    public static String json(Identity id) {
        java.io.StringWriter text = new java.io.StringWriter(160);
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            write(g, id);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /** Writes {@code id} as one JSON object, as a plain {@code ObjectMapper} writes it. */
    public static void write(JsonGenerator g, Identity id) throws IOException {
        g.writeStartObject();
        g.writeNumberField("pid", id.pid());
        g.writeStringField("start", id.start());
        optional(g, "boot", id.boot());
        optional(g, "host", id.host());
        optional(g, "name", id.name());
        optional(g, "pidns", id.pidns());
        optional(g, "machine", id.machine());
        g.writeEndObject();
    }

    /**
     * A string field's value: a JSON string, or null for "not recorded".
     *
     * @throws JsonParseException for any other value
     */
    public static String string(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return null;
        }
        if (value != JsonToken.VALUE_STRING) {
            throw new JsonParseException(p, "\"" + p.currentName() + "\" must be a JSON string, not " + describe(value));
        }
        return p.getText();
    }

    /** What a token is, in words: "an object", "a number", "nothing". */
    public static String describe(JsonToken t) {
        if (t == null) {
            return "nothing";
        }
        switch (t) {
            case START_OBJECT:
                return "an object";
            case START_ARRAY:
                return "an array";
            case VALUE_TRUE:
            case VALUE_FALSE:
                return "a boolean";
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return "a number";
            case VALUE_STRING:
                return "a string";
            default:
                return t.asString() == null ? t.toString() : t.asString();
        }
    }

    private static void optional(JsonGenerator g, String field, String value) throws IOException {
        if (!value.isEmpty()) {
            g.writeStringField(field, value);
        }
    }

    /** The place of a string field among {@code start, boot, host, name, pidns, machine}, or -1. */
    private static int stringIndex(String field) {
        switch (field) {
            case "start":
                return 0;
            case "boot":
                return 1;
            case "host":
                return 2;
            case "name":
                return 3;
            case "pidns":
                return 4;
            case "machine":
                return 5;
            default:
                return -1;
        }
    }

    private static long pid(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) {
            return 0;
        }
        if (value != JsonToken.VALUE_NUMBER_INT) {
            String shown = value == JsonToken.VALUE_STRING ? "the string \"" + p.getText() + "\""
                    : value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY ? describe(value) : p.getText();
            throw new JsonParseException(p, "\"pid\" must be a whole number, not " + shown);
        }
        try {
            return p.getLongValue();
        } catch (InputCoercionException e) {
            throw new JsonParseException(p, "\"pid\" " + p.getText() + " does not fit in 64 bits");
        }
    }
}
