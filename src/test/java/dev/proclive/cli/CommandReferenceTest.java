package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code docs/commands.md}, the command reference, says what the command says of itself: a section
 * for every command and lease action, every option its help names described there, every exit
 * status its help gives there too, and no command the help does not know.
 */
class CommandReferenceTest {

    private static final Path REFERENCE = Path.of("docs/commands.md");
    private static final Pattern OPTION = Pattern.compile("--[a-z][a-z-]*");
    /** What every lease action takes for its store, described once, in their own section. */
    private static final Set<String> STORE = Set.of("--dir", "--etcd", "--prefix", "--etcd-ca", "--etcd-password-file");

    private static String help(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = new Main(new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream()),
                new ByteArrayInputStream(new byte[0])).run(args);
        assertThat(exit).as(String.join(" ", args)).isZero();
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The reference's sections, by their heading ("proclive lease run"), each with its text. */
    private static Map<String, String> sections() throws Exception {
        Map<String, String> sections = new LinkedHashMap<>();
        String[] parts = Files.readString(REFERENCE).split("(?m)^## ");
        for (String part : parts) {
            int end = part.indexOf('\n');
            if (end > 0) {
                sections.put(part.substring(0, end).strip(), part.substring(end));
            }
        }
        return sections;
    }

    private static Set<String> options(String text) {
        Set<String> found = new LinkedHashSet<>();
        Matcher m = OPTION.matcher(text);
        while (m.find()) {
            found.add(m.group());
        }
        return found;
    }

    /** The options a section describes: each in a paragraph of its own, under a line that starts with it. */
    private static Set<String> described(String section) {
        Set<String> found = new LinkedHashSet<>();
        for (String line : section.split("\n")) {
            if (line.startsWith("`--")) {
                found.addAll(options(line));
            }
        }
        return found;
    }

    /** The top-level commands and the options each takes, as {@code proclive --help} lists them. */
    private static Map<String, Set<String>> commands() {
        Map<String, Set<String>> commands = new LinkedHashMap<>();
        Matcher line = Pattern.compile("(?m)^  ([a-z]+)( [^\\n]*)?$").matcher(help("--help"));
        while (line.find()) {
            String words = line.group(2) == null ? "" : line.group(2);
            // the description column starts after a run of spaces; only the synopsis names options
            String synopsis = words.split(" {2,}")[0];
            commands.put(line.group(1), options(synopsis));
        }
        return commands;
    }

    @Test
    void everyCommandHasItsSectionWithEachOfItsOptionsAndNothingTheHelpDoesNotKnow() throws Exception {
        Map<String, Set<String>> commands = commands();
        assertThat(commands.keySet()).as("read from --help")
                .contains("owner", "identify", "check", "wait", "ancestry", "ancestor", "lease", "demo");
        Map<String, String> sections = sections();
        for (Map.Entry<String, Set<String>> command : commands.entrySet()) {
            if (command.getKey().equals("lease")) {
                continue; // each action has its own section, checked below
            }
            String section = sections.get("proclive " + command.getKey());
            assertThat(section).as("a section for " + command.getKey()).isNotNull();
            assertThat(described(section)).as(command.getKey() + "'s options, each described").containsAll(command.getValue());
            assertThat(section).as(command.getKey() + " says its exit status").contains("**Exit status:**");
        }
        for (String heading : sections.keySet()) {
            if (heading.startsWith("proclive ")) {
                String[] words = heading.split(" ");
                assertThat(commands).as("a section for a command the help knows: " + heading).containsKey(words[1]);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"acquire", "run", "claim", "renew", "release", "show", "break", "keep"})
    void everyLeaseActionHasItsSectionWithItsOptionsAndExitStatus(String action) throws Exception {
        String help = help("lease", action, "--help");
        Map<String, String> sections = sections();
        String section = sections.get("proclive lease " + action);
        assertThat(section).as("a section for lease " + action).isNotNull();
        Set<String> taken = options(help.substring(help.indexOf("options:")));
        assertThat(taken).as("read from its help").isNotEmpty();
        Set<String> own = new LinkedHashSet<>(taken);
        own.removeAll(STORE);
        assertThat(described(section)).as("lease " + action + "'s own options, each described").containsAll(own);
        assertThat(described(sections.get("The lease store options"))).containsAll(STORE);
        assertThat(section).contains("**Exit status:**");
        String exit = help.substring(help.indexOf("exit:"));
        Matcher code = Pattern.compile("\\b(\\d{1,3})\\b").matcher(exit.substring(0, exit.indexOf("options:")));
        String status = section.substring(section.indexOf("**Exit status:**"));
        while (code.find()) {
            if (!code.group(1).equals("128") && !code.group(1).equals("4")) { // 128+N, and the "3/4" of a TTL
                assertThat(status).as("lease " + action + " exits " + code.group(1)).containsPattern("\\b" + code.group(1) + "\\b");
            }
        }
    }

    @Test
    void theExamplesRunCommandsThatExist() throws Exception {
        Set<String> known = commands().keySet();
        Matcher run = Pattern.compile("(?m)^\\$ .*?\\bproclive ([a-z]+)").matcher(Files.readString(REFERENCE));
        List<String> seen = new java.util.ArrayList<>();
        while (run.find()) {
            seen.add(run.group(1));
            assertThat(known).as("an example's command").contains(run.group(1));
        }
        assertThat(seen).as("examples were found").hasSizeGreaterThan(10);
    }
}
