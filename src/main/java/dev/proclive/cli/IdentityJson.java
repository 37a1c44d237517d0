package dev.proclive.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.proclive.Identity;
import dev.proclive.text.IdentityStream;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * An {@link Identity} read and written with jackson-core's streaming parser and generator
 * ({@link IdentityStream}): the bytes and the rules of a plain {@code ObjectMapper} with
 * {@code FAIL_ON_TRAILING_TOKENS} and {@code STRICT_DUPLICATE_DETECTION}, without building one
 * (that alone is most of a hook command's time). Reads: one JSON object, UTF-8 bytes, nothing
 * after it, a field given twice refused.
 * The CLI's other answers are written here too, the same way: a verdict, an ancestry match, a
 * chain, the nearest session, a removed record. The CLI's one JSON codec; no JSON is made by
 * joining strings.
 */
final class IdentityJson {

    private static final JsonFactory FACTORY = IdentityStream.FACTORY;

    private IdentityJson() {
    }

    /**
     * The identity in {@code bytes}; empty for JSON {@code null}.
     *
     * @throws com.fasterxml.jackson.core.JsonProcessingException for text that is not JSON or JSON
     *                                                            of another shape, with its location
     */
    static Optional<Identity> read(byte[] bytes) throws IOException {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            Optional<Identity> id = IdentityStream.read(p, p.nextToken());
            end(p);
            return id;
        }
    }

    /**
     * One line of {@code ancestor --nearest}: {@code {"key":"…","owner":{IDENTITY}}}, both required,
     * other fields skipped.
     *
     * @throws com.fasterxml.jackson.core.JsonProcessingException for anything else, with its location
     */
    static java.util.Map.Entry<String, Identity> keyed(byte[] bytes) throws IOException {
        try (JsonParser p = FACTORY.createParser(bytes)) {
            JsonToken first = p.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw new JsonParseException(p, "a line is {\"key\":\"…\",\"owner\":{…}}, not " + IdentityStream.describe(first));
            }
            String key = null;
            Optional<Identity> owner = Optional.empty();
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (field.equals("key")) {
                    key = IdentityStream.string(p, value);
                } else if (field.equals("owner")) {
                    owner = IdentityStream.read(p, value);
                } else {
                    p.skipChildren();
                }
            }
            end(p);
            if (key == null || owner.isEmpty()) {
                throw new JsonParseException(p, "a line needs a \"key\" string and an \"owner\" identity");
            }
            return java.util.Map.entry(key, owner.get());
        }
    }

    /** The identity as one JSON object, as a plain {@code ObjectMapper} writes it. */
    static String write(Identity id) {
        return IdentityStream.json(id);
    }

    /**
     * What {@code ancestor --nearest} prints: {@code {"nearest":"KEY","depth":N}}, or {@code
     * {"nearest":null,"relation":"ambiguous","keys":[…],"depth":N}}, {@code "none"}, or {@code
     * "unknown"} with {@code "reason"}.
     */
    static String nearest(dev.proclive.Ancestry.Nearest<String> n) {
        StringWriter text = new StringWriter(80);
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            g.writeStartObject();
            if (n instanceof dev.proclive.Ancestry.Nearest.Found<String> found) {
                g.writeStringField("nearest", found.key());
                g.writeNumberField("depth", found.depth());
            } else {
                g.writeNullField("nearest");
                if (n instanceof dev.proclive.Ancestry.Nearest.Ambiguous<String> tie) {
                    g.writeStringField("relation", "ambiguous");
                    g.writeArrayFieldStart("keys");
                    for (String key : tie.keys()) {
                        g.writeString(key);
                    }
                    g.writeEndArray();
                    g.writeNumberField("depth", tie.depth());
                } else if (n instanceof dev.proclive.Ancestry.Nearest.Unknown<String> unknown) {
                    g.writeStringField("relation", "unknown");
                    g.writeStringField("reason", unknown.reason());
                } else {
                    g.writeStringField("relation", "none");
                }
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /**
     * {@code {"liveness":"alive","reason":"matched"}}: a verdict as {@code check} and {@code wait}
     * print it; with {@code "exit":{"code":3}} or {@code "exit":{"signal":9,"signalName":"SIGKILL",
     * "coreDumped":false}} where the kernel told how it ended.
     */
    static String verdict(dev.proclive.Verdict verdict) {
        StringWriter text = new StringWriter(64);
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            g.writeStartObject();
            g.writeStringField("liveness", verdict.liveness().json());
            g.writeStringField("reason", verdict.reason().json());
            if (verdict.exit().isPresent()) {
                dev.proclive.ExitStatus e = verdict.exit().get();
                g.writeObjectFieldStart("exit");
                if (e.code().isPresent()) {
                    g.writeNumberField("code", e.code().getAsInt());
                } else {
                    g.writeNumberField("signal", e.signal().getAsInt());
                    if (e.signalName().isPresent()) {
                        g.writeStringField("signalName", e.signalName().get());
                    }
                    g.writeBooleanField("coreDumped", e.coreDumped());
                }
                g.writeEndObject();
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /**
     * {@code {"relation":"ancestor","depth":1}}, {@code {"relation":"not_ancestor"}}, {@code {"relation":"unknown","reason":"other_host"}}:
     * an ancestor at {@code depth}, else unknown for {@code unknown}'s reason, else provably not one.
     */
    static String match(OptionalInt depth, Optional<String> unknown) {
        StringWriter text = new StringWriter(48);
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            g.writeStartObject();
            if (depth.isPresent()) {
                g.writeStringField("relation", "ancestor");
                g.writeNumberField("depth", depth.getAsInt());
            } else if (unknown.isEmpty()) {
                g.writeStringField("relation", "not_ancestor");
            } else {
                g.writeStringField("relation", "unknown");
                g.writeStringField("reason", unknown.get());
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /** {@code {"complete":true,"chain":[…identities…]}}, nearest first: what {@code ancestry} prints. */
    static String ancestry(dev.proclive.Ancestry a) {
        StringWriter text = new StringWriter(160 * (a.chain().size() + 1));
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            g.writeStartObject();
            g.writeBooleanField("complete", a.complete());
            g.writeArrayFieldStart("chain");
            for (Identity id : a.chain()) {
                g.writeRawValue(write(id));
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /** {@code {"name":"build","removed":"why"}}: what {@code lease break} prints for a record it could not trust. */
    static String removed(String name, String why) {
        StringWriter text = new StringWriter(64 + why.length());
        try (JsonGenerator g = FACTORY.createGenerator(text)) {
            g.writeStartObject();
            g.writeStringField("name", name);
            g.writeStringField("removed", why);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("a StringWriter does not fail", e);
        }
        return text.toString();
    }

    /** Nothing but white space after the value. */
    private static void end(JsonParser p) throws IOException {
        JsonToken after = p.nextToken();
        if (after != null) {
            throw new JsonParseException(p, "trailing content after the identity: " + IdentityStream.describe(after));
        }
    }
}
