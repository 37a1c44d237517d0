package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The wire format, through a plain ObjectMapper with no module and no configuration. */
class IdentityJsonTest {

    final ObjectMapper mapper = new ObjectMapper();

    static final Identity FULL = new Identity(123, "4567", "b6f1", "devbox", "node", "4026531836");

    /** A caller's own state record holding an identity. */
    record LockState(String id, Identity owner, List<Identity> helpers) { }

    private static String fixture(String name) throws IOException {
        try (InputStream in = IdentityJsonTest.class.getResourceAsStream("/json/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
    }

    @Test
    void writesEveryFieldInTheWireOrder() throws Exception {
        assertThat(mapper.writeValueAsString(FULL)).isEqualTo(
                "{\"pid\":123,\"start\":\"4567\",\"boot\":\"b6f1\",\"host\":\"devbox\",\"name\":\"node\",\"pidns\":\"4026531836\"}");
    }

    @Test
    void leavesOutEmptyFieldsButNeverPidOrStart() throws Exception {
        assertThat(mapper.writeValueAsString(new Identity(0, null, null, null, null, null)))
                .isEqualTo("{\"pid\":0,\"start\":\"\"}");
        assertThat(mapper.writeValueAsString(new Identity(7, "", "", "h", "", "")))
                .isEqualTo("{\"pid\":7,\"start\":\"\",\"host\":\"h\"}");
    }

    @Test
    void roundTrips() throws Exception {
        assertThat(mapper.readValue(mapper.writeValueAsString(FULL), Identity.class)).isEqualTo(FULL);
        Identity sparse = new Identity(9, "1", "", "", "", "");
        assertThat(mapper.readValue(mapper.writeValueAsString(sparse), Identity.class)).isEqualTo(sparse);
    }

    @Test
    void roundTripsAsAFieldOfTheCallersRecord() throws Exception {
        LockState state = new LockState("lock-1", FULL, List.of(new Identity(5, "6", "", "h", "", "")));
        String json = mapper.writeValueAsString(state);
        assertThat(json).contains("\"owner\":{\"pid\":123,\"start\":\"4567\"");
        assertThat(mapper.readValue(json, LockState.class)).isEqualTo(state);
    }

    @Test
    void readsWhatTheGoPackageWritesByteForByte() throws Exception {
        String go = fixture("go-full.json");
        Identity id = mapper.readValue(go, Identity.class);
        assertThat(id).isEqualTo(new Identity(4242, "123456", "b6f1a6c3-3f0e-4a57-9d2c-2c5d0a9c1e11",
                "devbox", "node", ""));
        assertThat(mapper.writeValueAsString(id)).isEqualTo(go);
        String darwin = fixture("go-darwin-minimal.json");
        assertThat(mapper.writeValueAsString(mapper.readValue(darwin, Identity.class))).isEqualTo(darwin);
        String zero = fixture("go-zero.json");
        assertThat(mapper.writeValueAsString(mapper.readValue(zero, Identity.class))).isEqualTo(zero);
    }

    @Test
    void ignoresUnknownFieldsAndReadsMissingOnesAsEmpty() throws Exception {
        Identity id = mapper.readValue("{\"pid\":5,\"future\":{\"x\":[1,2]},\"tid\":9}", Identity.class);
        assertThat(id).isEqualTo(new Identity(5, "", "", "", "", ""));
        assertThat(mapper.readValue("{}", Identity.class)).isEqualTo(new Identity(0, "", "", "", "", ""));
        assertThat(mapper.readValue("{\"pid\":null,\"start\":null,\"host\":null}", Identity.class))
                .isEqualTo(new Identity(0, "", "", "", "", ""));
    }

    @Test
    void acceptsEverySixtyFourBitPid() throws Exception {
        assertThat(mapper.readValue("{\"pid\":9223372036854775807}", Identity.class).pid()).isEqualTo(Long.MAX_VALUE);
        assertThat(mapper.readValue("{\"pid\":-1}", Identity.class).pid()).isEqualTo(-1);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"pid\":1.5,\"start\":\"1\"}",
            "{\"pid\":\"12\",\"start\":\"1\"}",
            "{\"pid\":true}",
            "{\"pid\":[1]}",
            "{\"pid\":{}}",
            "{\"pid\":9223372036854775808}",
            "{\"pid\":1e3}",
            "[1,2]",
            "\"just a string\"",
    })
    void aPidThatIsNotA64BitWholeNumberOrTheWrongShapeIsAMismatch(String json) {
        assertThatThrownBy(() -> mapper.readValue(json, Identity.class))
                .isInstanceOf(MismatchedInputException.class)
                .isInstanceOf(JsonProcessingException.class);
    }

    @Test
    void aPidErrorSaysWhatIsWrong() {
        assertThatThrownBy(() -> mapper.readValue("{\"pid\":1.5}", Identity.class))
                .hasMessageContaining("\"pid\" must be a whole number, not 1.5");
        assertThatThrownBy(() -> mapper.readValue("{\"pid\":99999999999999999999}", Identity.class))
                .hasMessageContaining("does not fit in 64 bits");
        assertThatThrownBy(() -> mapper.readValue("{\"pid\":\"12\"}", Identity.class))
                .hasMessageContaining("not the string \"12\"");
        assertThatThrownBy(() -> mapper.readValue("{\"pid\":{}}", Identity.class)).hasMessageContaining("not an object");
        assertThatThrownBy(() -> mapper.readValue("{\"pid\":[1]}", Identity.class)).hasMessageContaining("not an array");
        assertThatThrownBy(() -> mapper.readValue("{\"pid\":true}", Identity.class)).hasMessageContaining("not true");
    }

    @Test
    void aNullPidIsNoPid() throws Exception {
        assertThat(mapper.readValue("{\"pid\":null,\"start\":\"1\"}", Identity.class).pid()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"pid\":", "{pid:1}", "{\"pid\":1,}", "not json"})
    void textThatIsNotJsonIsAParseError(String json) {
        assertThatThrownBy(() -> mapper.readValue(json, Identity.class))
                .isInstanceOf(JsonProcessingException.class)
                .isNotInstanceOf(MismatchedInputException.class);
        assertThatThrownBy(() -> mapper.readValue("not json", Identity.class)).isInstanceOf(JsonParseException.class);
    }

    @Test
    void nullStringsBecomeEmpty() {
        Identity id = new Identity(1, null, null, null, null, null);
        assertThat(List.of(id.start(), id.boot(), id.host(), id.name(), id.pidns())).containsOnly("");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"pid\":1,\"start\":true}", "{\"pid\":1,\"start\":18}", "{\"pid\":1,\"start\":1.5}",
            "{\"pid\":1,\"boot\":5}", "{\"pid\":1,\"host\":false}", "{\"pid\":1,\"name\":123}",
            "{\"pid\":1,\"pidns\":4026531836}", "{\"pid\":1,\"start\":[\"1\"]}", "{\"pid\":1,\"start\":{}}"})
    void aStringFieldThatIsNotAStringIsAMismatchNeverCoerced(String json) {
        assertThatThrownBy(() -> mapper.readValue(json, Identity.class))
                .isInstanceOf(MismatchedInputException.class)
                .hasMessageContaining("must be a JSON string");
    }

    @Test
    void nullStringFieldsReadAsNotRecorded() throws Exception {
        assertThat(mapper.readValue("{\"pid\":1,\"start\":null,\"boot\":null,\"host\":null,\"name\":null,\"pidns\":null}",
                Identity.class)).isEqualTo(new Identity(1, "", "", "", "", ""));
    }

    @Test
    void bytesThatAreNotUtf8AreMalformed() {
        byte[] json = "{\"pid\":1,\"start\":\"1\",\"name\":\"caf\u00e9\"}".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        assertThatThrownBy(() -> mapper.readValue(json, Identity.class))
                .isInstanceOf(com.fasterxml.jackson.core.JsonProcessingException.class)
                .hasMessageContaining("UTF-8");
    }

    @Test
    void aBatchWithANullElementSaysWhichOne() {
        Identity id = new Identity(1, "1", "", "", "", "");
        assertThatThrownBy(() -> ProcLive.checkAll(java.util.Arrays.asList(id, null)))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("identities[1] is null");
        assertThatThrownBy(() -> ProcLive.checkAll(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("identities");
    }
}
