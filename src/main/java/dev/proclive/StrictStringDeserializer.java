package dev.proclive;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
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
                "\"" + p.currentName() + "\" must be a JSON string, not " + describe(p.currentToken()));
    }

    @Override
    public String getNullValue(DeserializationContext ctxt) {
        return "";
    }

    static String describe(JsonToken t) {
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
            default:
                return t.toString();
        }
    }
}
