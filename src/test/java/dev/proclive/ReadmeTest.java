package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's promises: its Java compiles, and it names the two set-up commands CI uses. */
class ReadmeTest {

    static final Path README = Path.of("README.md");

    @TempDir
    Path dir;

    private static List<String> blocks(String language) throws Exception {
        Matcher m = Pattern.compile("```" + language + "\\n(.*?)```", Pattern.DOTALL).matcher(Files.readString(README));
        List<String> blocks = new ArrayList<>();
        while (m.find()) {
            blocks.add(m.group(1));
        }
        return blocks;
    }

    @Test
    void javaSnippetsCompile() throws Exception {
        List<String> snippets = blocks("java");
        assertThat(snippets).isNotEmpty();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        for (int i = 0; i < snippets.size(); i++) {
            String snippet = snippets.get(i);
            // A snippet shows its own imports: they go above the class, and nothing else is imported.
            List<String> imports = snippet.lines().filter(l -> l.startsWith("import ")).toList();
            String body = String.join("\n", snippet.lines().filter(l -> !l.startsWith("import ")).toList()).strip();
            assertThat(imports).as("README snippet %d shows its imports:%n%s", i, snippet).isNotEmpty();
            assertThat(body.lines().count()).as("a quick start of ten lines or fewer").isLessThanOrEqualTo(10);
            Path source = dir.resolve("Snippet" + i + ".java");
            Files.writeString(source, String.join("\n", String.join("\n", imports),
                    "class Snippet" + i + " {",
                    "  void run() throws Exception {",
                    body,
                    "  }",
                    "}"));
            ByteArrayOutputStream errors = new ByteArrayOutputStream();
            int status = javac.run(null, null, errors, "-d", dir.toString(), "-proc:none", "-encoding", "UTF-8",
                    "-cp", System.getProperty("java.class.path") + File.pathSeparator + "target/classes",
                    source.toString());
            assertThat(status).as("README snippet %d:%n%s%n%s", i, snippet,
                    errors.toString(StandardCharsets.UTF_8)).isZero();
        }
    }

    @Test
    void namesExactlyTheTwoSetUpCommands() throws Exception {
        List<String> commands = new ArrayList<>();
        for (String block : blocks("sh")) {
            for (String line : block.split("\n")) {
                String command = line.replaceAll("\\s+#.*$", "").strip();
                if (!command.isEmpty()) {
                    commands.add(command);
                }
            }
        }
        assertThat(commands).containsExactly(
                "mvn -B -Dmaven.test.skip=true -Dmaven.javadoc.skip=true package && java -jar target/proclive-cli.jar demo",
                "mvn -B verify");
        assertThat(Files.readString(Path.of(".ci/run"))).containsPattern("(?m)^mvn -B verify$");
    }
}
