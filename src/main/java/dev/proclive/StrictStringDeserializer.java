package dev.proclive;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.proclive.text.IdentityStream;
import java.io.IOException;

/**
 * Reads the string fields of an {@link Identity} as Go's {@code encoding/json} does: a JSON string,
 * or null for "not recorded". Jackson's default would coerce {@code true} to {@code "true"} and
 * {@code 18} to {@code "18"}, and a coerced fingerprint would read as another process: a DEAD
 * nobody proved.
 */
final class StrictStringDeserializer extends JsonDeserializer<String> {

    @Override
    public String deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        throw MismatchedInputException.from(p, String.class,
                "\"" + p.currentName() + "\" must be a JSON string, not " + IdentityStream.describe(p.currentToken()));
    }

    @Override
    public String getNullValue(DeserializationContext ctxt) {
        return "";
    }
}
