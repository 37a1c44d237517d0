package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The CLI's streaming identity JSON against a plain {@code ObjectMapper} (what library callers
 * use): the same identity or a failure for every input, the same bytes for every identity.
 */
class StreamingIdentityJsonTest {

    private final ObjectMapper mapper = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private static final List<String> INPUTS = List.of(
            "{\"pid\":123,\"start\":\"4567\"}",
            "{\"pid\":123,\"start\":\"4567\",\"boot\":\"b\",\"host\":\"h\",\"name\":\"n\",\"pidns\":\"4026531836\",\"machine\":\"m\"}",
            "{}",
            "{\"start\":\"1\"}",
            "{\"pid\":null,\"start\":null,\"boot\":null,\"host\":null,\"name\":null,\"pidns\":null,\"machine\":null}",
            "{\"pid\":1,\"start\":\"1\",\"extra\":{\"deep\":[1,2,{\"x\":null}]},\"more\":[],\"n\":1.5,\"t\":true}",
            "{\"pid\":1,\"pid\":2,\"start\":\"a\",\"start\":\"b\"}",
            "{\"pid\":1,\"start\":\"a\",\"start\":null}",
            "{\"pid\":-5,\"start\":\"x\"}",
            "{\"pid\":-0,\"start\":\"x\"}",
            "{\"pid\":9223372036854775807,\"start\":\"x\"}",
            "{\"pid\":-9223372036854775808,\"start\":\"x\"}",
            "{\"pid\":9223372036854775808,\"start\":\"x\"}",
            "{\"pid\":1.5,\"start\":\"x\"}",
            "{\"pid\":1e3,\"start\":\"x\"}",
            "{\"pid\":\"12\",\"start\":\"x\"}",
            "{\"pid\":true,\"start\":\"x\"}",
            "{\"pid\":[1],\"start\":\"x\"}",
            "{\"pid\":{},\"start\":\"x\"}",
            "{\"pid\":01,\"start\":\"x\"}",
            "{\"pid\":1,\"start\":18}",
            "{\"pid\":1,\"start\":true}",
            "{\"pid\":1,\"start\":[\"1\"]}",
            "{\"pid\":1,\"start\":{}}",
            "{\"pid\":1,\"boot\":1.0}",
            "{\"pid\":1,\"machine\":false}",
            "{\"pid\":1,\"start\":\"1\"} ",
            "\n\t {\"pid\":1,\"start\":\"1\"}\n",
            "{\"pid\":1,\"start\":\"1\"} {}",
            "{\"pid\":1,\"start\":\"1\"}x",
            "{\"pid\":1,\"start\":\"1\"}]",
            "{\"pid\":1,\"start\":\"1\"",
            "{\"pid\":1,\"start\":\"1\",}",
            "{'pid':1}",
            "{pid:1}",
            "{\"pid\":1 /* c */}",
            "{\"pid\":NaN}",
            "[1,2]",
            "[]",
            "\"text\"",
            "12",
            "true",
            "null",
            "null null",
            "null {}",
            "{\"pid\":1,\"start\":\"\\u00e9\\n\\t\\\"\\\\\\/\"}",
            "{\"pid\":1,\"start\":\"\\ud83d\\ude00\"}",
            "{\"pid\":1,\"start\":\"\\ud83d\"}",
            "{\"pid\":1,\"start\":\"\\x41\"}",
            "{\"pid\":1,\"start\":\"a\u0001b\"}",
            "{\"pid\":1,\"name\":\"caf\u00e9 \u4e16\u754c\"}",
            "{\"\":1,\"pid\":2}",
            "{\"PID\":1,\"Start\":\"x\"}");

    @Test
    void readsEveryInputAsAPlainObjectMapperDoes() throws Exception {
        List<byte[]> inputs = new ArrayList<>();
        INPUTS.forEach(s -> inputs.add(s.getBytes(StandardCharsets.UTF_8)));
        inputs.add(new byte[] {'{', '"', 'n', 'a', 'm', 'e', '"', ':', '"', (byte) 0xc3, '"', '}'}); // cut UTF-8
        inputs.add(new byte[] {'{', '"', 'n', 'a', 'm', 'e', '"', ':', '"', (byte) 0xff, '"', '}'});
        inputs.add(new byte[] {(byte) 0xef, (byte) 0xbb, (byte) 0xbf, '{', '}'}); // a byte-order mark
        inputs.add("[".repeat(3000).getBytes(StandardCharsets.US_ASCII));
        inputs.add(("{\"pid\":1,\"x\":" + "[".repeat(3000) + "]".repeat(3000) + "}").getBytes(StandardCharsets.US_ASCII));
        int failures = 0;
        for (byte[] input : inputs) {
            Optional<Identity> expected;
            try {
                expected = Optional.ofNullable(mapper.readValue(input, Identity.class));
            } catch (JsonProcessingException e) {
                failures++;
                assertThatThrownBy(() -> IdentityJson.read(input)).as(new String(input, StandardCharsets.UTF_8))
                        .isInstanceOf(JsonProcessingException.class);
                continue;
            }
            assertThat(IdentityJson.read(input)).as(new String(input, StandardCharsets.UTF_8)).isEqualTo(expected);
        }
        assertThat(failures).as("the corpus holds both kinds").isBetween(10, inputs.size() - 10);
    }

    @Test
    void namesTheFieldAndTheValueThatIsWrong() {
        assertThatThrownBy(() -> IdentityJson.read("{\"pid\":1.5}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("\"pid\" must be a whole number, not 1.5");
        assertThatThrownBy(() -> IdentityJson.read("{\"pid\":\"12\"}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("\"pid\" must be a whole number, not the string \"12\"");
        assertThatThrownBy(() -> IdentityJson.read("{\"pid\":99999999999999999999}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("does not fit in 64 bits");
        assertThatThrownBy(() -> IdentityJson.read("{\"boot\":[]}".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("\"boot\" must be a JSON string, not an array");
        assertThatThrownBy(() -> IdentityJson.read("{} []".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("trailing content");
        assertThatThrownBy(() -> IdentityJson.read("[]".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("an identity is a JSON object, not an array");
    }

    @Test
    void writesTheBytesAPlainObjectMapperWrites() throws Exception {
        Random random = new Random(22);
        List<Identity> identities = new ArrayList<>(List.of(
                new Identity(0, "", "", "", "", "", ""),
                new Identity(-1, "", "", "", "", ""),
                new Identity(Long.MAX_VALUE, "4567", "b", "h", "n", "4026531836", "0123456789abcdef0123456789abcdef"),
                new Identity(Long.MIN_VALUE, "1", "", "host", "", "", "")));
        for (int i = 0; i < 2000; i++) {
            identities.add(new Identity(random.nextLong(), text(random), text(random), text(random), text(random),
                    text(random), text(random)));
        }
        for (Identity id : identities) {
            String ours = IdentityJson.write(id);
            assertThat(ours).isEqualTo(mapper.writeValueAsString(id));
            if (!ours.contains("\ud800")) { // a lone surrogate has no UTF-8 form to read back
                assertThat(IdentityJson.read(ours.getBytes(StandardCharsets.UTF_8))).hasValue(id);
            }
        }
    }

    /** Empty a third of the time; else up to 12 characters from every range that escapes differently. */
    private static String text(Random random) {
        if (random.nextInt(3) == 0) {
            return "";
        }
        String alphabet = "az09 \"\\/\b\f\n\r\t\u0000\u0001\u001f\u007f\u0080\u009f\u00e9\u2028\u2029\u4e16\ud83d\ude00\ufffd";
        StringBuilder b = new StringBuilder();
        for (int n = random.nextInt(12) + 1; n > 0; n--) {
            int at = random.nextInt(alphabet.length());
            char c = alphabet.charAt(at);
            if (Character.isHighSurrogate(c)) {
                b.append(c).append(alphabet.charAt(at + 1));
            } else if (!Character.isLowSurrogate(c)) {
                b.append(c);
            }
        }
        if (random.nextInt(20) == 0) {
            b.append('\ud800'); // a lone surrogate, as a Java string may hold one
        }
        return b.toString();
    }
}
