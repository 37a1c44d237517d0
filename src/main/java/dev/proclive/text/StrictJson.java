package dev.proclive.text;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * Strict JSON: trailing content and duplicate fields are refused (in a record either could hide another holder or
 * fence). {@link #tree} applies them with jackson-core alone: directory-lease commands must start without a mapper.
 */
public final class StrictJson {

    private StrictJson() {
    }

    /** Made on first use (a remote book's messages); shared, so never reconfigured. */
    private static final class Strict {
        static final ObjectMapper MAPPER = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    }

    /** The library's one {@code ObjectMapper}. */
    public static ObjectMapper mapper() {
        return Strict.MAPPER;
    }

    /** The value in {@code bytes}, read by {@link #mapper()}'s rules without making it; null when there is none. */
    public static JsonNode tree(byte[] bytes) throws IOException {
        try (JsonParser p = IdentityStream.FACTORY.createParser(bytes)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                return null;
            }
            JsonNode root = node(p, first);
            JsonToken after = p.nextToken();
            if (after != null) {
                throw new JsonParseException(p, "trailing content after the value: " + IdentityStream.describe(after));
            }
            return root;
        }
    }

    /** The parser's depth limit bounds the recursion. */
    private static JsonNode node(JsonParser p, JsonToken t) throws IOException {
        JsonNodeFactory nodes = JsonNodeFactory.instance; // an if chain: a switch over jackson's enum is one class more
        if (t == JsonToken.START_OBJECT) {
            ObjectNode o = nodes.objectNode();
            for (JsonToken field = p.nextToken(); field != JsonToken.END_OBJECT; field = p.nextToken()) {
                String key = p.currentName();
                o.set(key, node(p, p.nextToken()));
            }
            return o;
        }
        if (t == JsonToken.START_ARRAY) {
            ArrayNode a = nodes.arrayNode();
            for (JsonToken v = p.nextToken(); v != JsonToken.END_ARRAY; v = p.nextToken()) {
                a.add(node(p, v));
            }
            return a;
        }
        if (t == JsonToken.VALUE_STRING) {
            return nodes.textNode(p.getText());
        }
        if (t == JsonToken.VALUE_NUMBER_INT) {
            return nodes.numberNode(p.getBigIntegerValue()); // a reader asks canConvertToLong()
        }
        if (t == JsonToken.VALUE_NUMBER_FLOAT) {
            return nodes.numberNode(p.getDoubleValue());
        }
        if (t == JsonToken.VALUE_TRUE || t == JsonToken.VALUE_FALSE) {
            return nodes.booleanNode(t == JsonToken.VALUE_TRUE);
        }
        if (t == JsonToken.VALUE_NULL) {
            return nodes.nullNode();
        }
        throw new JsonParseException(p, "unexpected " + IdentityStream.describe(t));
    }
}
