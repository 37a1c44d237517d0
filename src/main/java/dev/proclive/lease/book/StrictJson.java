package dev.proclive.lease.book;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.proclive.text.IdentityStream;
import java.io.IOException;

/**
 * JSON read strictly, one way: trailing content and a field given twice are refused (in a record
 * either could hide another holder or fence; in an answer, another answer). {@link #mapper()} is
 * the library's one {@code ObjectMapper}, made the first time it is asked for (a remote book's messages);
 * {@link #tree} reads a value by the same rules with jackson-core's parser alone, for the records
 * of a directory's lease, whose commands must start without building a mapper.
 */
public final class StrictJson {

    private StrictJson() {
    }

    /** The one mapper, made when first used; shared, never changed after. */
    private static final class Strict {
        static final ObjectMapper MAPPER = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    }

    /** The library's one {@code ObjectMapper}: trailing content and a field given twice are refused. */
    public static ObjectMapper mapper() {
        return Strict.MAPPER;
    }

    /**
     * The JSON value in {@code bytes} as a tree, read as {@link #mapper()} reads one (a field given
     * twice and anything after the value refused) without making it; null when there is none.
     */
    static JsonNode tree(byte[] bytes) throws IOException {
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

    /** The value whose first token {@code t} is; the parser's depth limit bounds the recursion. */
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
