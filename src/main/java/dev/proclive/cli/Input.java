package dev.proclive.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.proclive.Identity;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * How the commands read what they are given and print an identity: one JSON identity from an
 * argument or standard input (read as UTF-8 bytes, at most {@value #MAX_INPUT_BYTES}), JSON Lines,
 * and every failure of it as bad input (65) that says what is wrong.
 */
final class Input {

    /** Standard input is read up to this many bytes; more is bad input, not an allocation failure. */
    static final int MAX_INPUT_BYTES = 1 << 20;

    private Input() {
    }

    /** The identity on standard input. */
    static Identity identity(InputStream in) {
        return parse(readStdin(in));
    }

    /** The identity in {@code command}'s argument {@code argument}. */
    static Identity identity(String command, String argument) {
        return parse(argumentBytes(notAnOption(command, argument)));
    }

    /**
     * An identity from JSON bytes, read by {@link IdentityJson} (no {@code ObjectMapper} is built on
     * a hook's path). Bytes, not a decoded {@code String}: Jackson refuses bytes that are not UTF-8,
     * where a decoded string would carry replacement characters into a verdict.
     */
    static Identity parse(byte[] bytes) {
        if (new String(bytes, StandardCharsets.ISO_8859_1).isBlank()) {
            throw new BadInput("no identity given: expected JSON such as {\"pid\":123,\"start\":\"4567\"}");
        }
        try {
            Optional<Identity> identity = IdentityJson.read(bytes);
            if (identity.isEmpty()) {
                throw new BadInput("the identity is JSON null");
            }
            return identity.get();
        } catch (JsonProcessingException e) {
            throw new BadInput("bad identity JSON: " + oneLine(e));
        } catch (IOException e) {
            throw new BadInput("cannot read the identity: " + e.getMessage());
        }
    }

    /** {@code argument}, unless it is an option this command does not have ({@code --bogus}): that is usage, not bad JSON. */
    static String notAnOption(String command, String argument) {
        if (argument.startsWith("--") || argument.startsWith("-") && argument.length() > 1
                && !Character.isDigit(argument.charAt(1))) {
            throw new Options.Usage(command + ": unknown option " + argument);
        }
        return argument;
    }

    /**
     * An argument as the UTF-8 bytes it came as. The JVM decodes arguments with the locale's
     * charset and puts U+FFFD where bytes did not decode: that is input we cannot read back.
     */
    static byte[] argumentBytes(String argument) {
        if (argument.indexOf('\uFFFD') >= 0) {
            throw new BadInput("the identity argument is not UTF-8 text"
                    + " (give it on standard input, which is read as UTF-8 bytes)");
        }
        return argument.getBytes(StandardCharsets.UTF_8);
    }

    /** Standard input, all of it, up to {@link #MAX_INPUT_BYTES}. */
    static byte[] readStdin(InputStream in) {
        try {
            byte[] bytes = in.readNBytes(MAX_INPUT_BYTES + 1);
            if (bytes.length > MAX_INPUT_BYTES) {
                throw new BadInput("standard input holds more than " + MAX_INPUT_BYTES
                        + " bytes; an identity is a few hundred");
            }
            return bytes;
        } catch (IOException e) {
            throw new BadInput("cannot read standard input: " + e.getMessage());
        }
    }

    /** The lines of {@code input} that are not blank. */
    static List<byte[]> lines(byte[] input) {
        List<byte[]> lines = new ArrayList<>();
        int from = 0;
        for (int i = 0; i <= input.length; i++) {
            if (i == input.length || input[i] == '\n') {
                byte[] line = Arrays.copyOfRange(input, from, i);
                if (!new String(line, StandardCharsets.ISO_8859_1).isBlank()) {
                    lines.add(line);
                }
                from = i + 1;
            }
        }
        return lines;
    }

    /** Prints {@code identity} as one JSON line (exit 0), or says none could be determined (exit 3). */
    static int print(Optional<Identity> identity, Command.Io io) {
        if (identity.isEmpty()) {
            Say.line(io.err(), "no identity could be determined");
            return ExitCode.NONE.code();
        }
        io.out().println(IdentityJson.write(identity.get()));
        return ExitCode.OK.code();
    }

    /** Jackson's message without its source excerpt, on one line. */
    static String oneLine(JsonProcessingException e) {
        String message = e.getOriginalMessage().replaceAll("\\s+", " ").trim();
        if (e.getLocation() != null && e.getLocation().getLineNr() > 0) {
            message += " (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")";
        }
        return message;
    }
}
