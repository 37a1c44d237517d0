package dev.proclive.macos;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The hardware UUID as a machine id, decoded from the registry's value on every OS. */
class PlatformUuidTest {

    @Test
    void aUuidIsTheMachineInUpperCase() {
        assertThat(PlatformUuid.parse("6B29FC40-CA47-1067-B31D-00DD010662DA")).contains("6B29FC40-CA47-1067-B31D-00DD010662DA");
        assertThat(PlatformUuid.parse("6b29fc40-ca47-1067-b31d-00dd010662da")).contains("6B29FC40-CA47-1067-B31D-00DD010662DA");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "00000000-0000-0000-0000-000000000000", "6B29FC40CA471067B31D00DD010662DA",
            "6B29FC40-CA47-1067-B31D-00DD010662D", "6B29FC40-CA47-1067-B31D-00DD010662DAA",
            "6B29FC40_CA47-1067-B31D-00DD010662DA", "6B29FC40-CA47-1067-B31D-00DD010662DG",
            " 6B29FC40-CA47-1067-B31D-00DD010662D", "６B29FC40-CA47-1067-B31D-00DD010662DA"})
    void anythingElseIsNoMachine(String value) {
        assertThat(PlatformUuid.parse(value)).isEmpty();
    }

    @Test
    void noValueIsNoMachine() {
        assertThat(PlatformUuid.parse(null)).isEmpty();
    }
}
