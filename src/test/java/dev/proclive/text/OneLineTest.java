package dev.proclive.text;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The one quoting rule. */
class OneLineTest {

    @Test
    void controlCharactersAreEscapedAndNothingElse() {
        assertThat(OneLine.escape("a\nb\r\tc\u001b[2J\u0085\u2028\u007f \"x\\y\" \u00e9"))
                .isEqualTo("a\\nb\\r\\tc\\u001b[2J\\u0085\\u2028\\u007f \"x\\y\" \u00e9");
    }

    @Test
    void aQuotedTextEscapesQuotesAndBackslashesToo() {
        assertThat(OneLine.quote("say \"hi\\\"\n")).isEqualTo("\"say \\\"hi\\\\\\\"\\n\"");
        assertThat(OneLine.quote("")).isEqualTo("\"\"");
    }
}
