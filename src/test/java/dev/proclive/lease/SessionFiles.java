package dev.proclive.lease;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** What the session files of a directory store say, read as a newcomer's test would. */
final class SessionFiles {

    private static final Pattern RENEWED_AT = Pattern.compile("\"renewedAt\":\"([^\"]+)\"");

    private SessionFiles() {
    }

    /** The text of each session file in {@code dir} (not a temporary one being written). */
    static List<String> texts(Path dir) throws IOException {
        List<String> texts = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (name.startsWith(".session.") && !name.endsWith(".tmp")) {
                    texts.add(Files.readString(f));
                }
            }
        }
        return texts;
    }

    /** The {@code renewedAt} a session file's text says; the epoch when it says none. */
    static Instant renewedAt(String text) {
        Matcher m = RENEWED_AT.matcher(text);
        return m.find() ? Instant.parse(m.group(1)) : Instant.EPOCH;
    }

    /** The latest {@code renewedAt} of a session file in {@code dir} that names lease {@code name} at {@code fence}. */
    static Instant keptAt(Path dir, String name, long fence) throws IOException {
        Instant latest = Instant.EPOCH;
        for (String text : texts(dir)) {
            if (text.contains("\"" + name + "\":" + fence + ",") || text.contains("\"" + name + "\":" + fence + "}")) {
                Instant at = renewedAt(text);
                latest = at.isAfter(latest) ? at : latest;
            }
        }
        return latest;
    }
}
