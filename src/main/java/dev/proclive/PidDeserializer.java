package dev.proclive;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import java.io.IOException;

/**
 * Reads {@link Identity#pid()} strictly: a JSON integer that fits in 64 bits, or null. Jackson's
 * default would turn {@code 1.9} into 1 or {@code "12"} into 12 — a guessed PID is worse than an
 * error.
 */
final class PidDeserializer extends JsonDeserializer<Long> {

    @Override
    public Long deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            throw MismatchedInputException.from(p, long.class,
                    "\"pid\" must be a whole number, not " + describe(p));
        }
        try {
            return p.getLongValue();
        } catch (InputCoercionException e) {
            throw MismatchedInputException.from(p, long.class, "\"pid\" " + p.getText() + " does not fit in 64 bits");
        }
    }

    @Override
    public Long getNullValue(DeserializationContext ctxt) {
        return 0L;
    }

    private static String describe(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_STRING) {
            return "the string \"" + p.getText() + "\"";
        }
        if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
            return StrictStringDeserializer.describe(t);
        }
        return p.getText();
    }
}
