package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import org.junit.jupiter.api.Test;

/** What the command line says about what nothing else caught: one line, never a verdict's exit code. */
class LastResortTest {

    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final PrintStream err = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    private String said() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void anUnexpectedExceptionIsExit70OnOneLine() {
        assertThat(Console.lastResort(err, new DateTimeException("Invalid value\nfor YearOfEra"))).isEqualTo(70);
        assertThat(said()).startsWith("proclive: internal error").endsWith("\n").containsOnlyOnce("\n")
                .contains("Invalid value\\nfor YearOfEra");
    }

    @Test
    void anUncheckedIoFailureIsExit74() {
        assertThat(Console.lastResort(err, new UncheckedIOException(new IOException("No space left on device")))).isEqualTo(74);
        assertThat(said()).isEqualTo("proclive: I/O failure: java.io.IOException: No space left on device\n");
    }

    @Test
    void everyLineSaidEscapesControlCharacters() {
        Say.line(err, "a\nb\r\tc\u001b[2J\u0085");
        assertThat(said()).isEqualTo("proclive: a\\nb\\r\\tc\\u001b[2J\\u0085\n");
    }
}
