package dev.proclive.cli;

import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code owner} run through real chains of shells and wrappers started by this JVM: the owner is
 * this JVM unless a wrapper is in the way and not skipped.
 */
@EnabledOnOs(OS.LINUX)
class OwnerChainIT {

    final ObjectMapper mapper = new ObjectMapper();
    final long self = ProcessHandle.current().pid();

    @TempDir
    Path dir;

    private Identity owner(List<String> command) throws Exception {
        Cli.Result r = Cli.exec(command, "");
        assertThat(r.exit()).as("%s: %s", command, r.err()).isZero();
        return mapper.readValue(r.line(), Identity.class);
    }

    /** The CLI command line, quoted for a shell. */
    private static String shellCli(String... args) {
        List<String> words = new ArrayList<>();
        for (String w : Cli.command(Cli.jar(), args)) {
            words.add("'" + w.replace("'", "'\\''") + "'");
        }
        return String.join(" ", words);
    }

    /**
     * A user's own wrapper program: a copy of {@code timeout} under another name, so that none of
     * its names is in the default skip set (a {@code #!/bin/sh} wrapper is skipped by its
     * interpreter). Run as {@code NAME 60 COMMAND...}, it runs the command as a child and waits.
     */
    private Path wrapper(String name) throws Exception {
        Path program = dir.resolve(name);
        Files.copy(Path.of(onPath("timeout")), program);
        program.toFile().setExecutable(true, false);
        return program;
    }

    static String onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return Path.of(d, tool).toString();
            }
        }
        throw new AssertionError(tool + " is not on PATH");
    }

    @Test
    void withNothingInBetweenTheOwnerIsThisJvm() throws Exception {
        assertThat(owner(Cli.command(Cli.jar(), "owner")).pid()).isEqualTo(self);
    }

    @Test
    void bashAndShAreSkipped() throws Exception {
        // "; true" keeps each shell from exec'ing its last command, so it stays in the chain.
        String inner = shellCli("owner") + "; true";
        List<String> command = List.of("bash", "-c", "sh -c \"" + inner.replace("\"", "\\\"") + "\"; true");
        Identity owner = owner(command);
        assertThat(owner.pid()).isEqualTo(self);
        assertThat(owner.name()).isEqualTo("java");
    }

    @Test
    void envIsSkipped() throws Exception {
        List<String> command = new ArrayList<>(List.of("env", "PROCLIVE_TEST=1", "sh", "-c", shellCli("owner") + "; true"));
        assertThat(owner(command).pid()).isEqualTo(self);
    }

    @Test
    void aNamedWrapperIsTheOwnerUntilSkipped() throws Exception {
        Path script = wrapper("mywrapper");
        List<String> plain = new ArrayList<>(List.of(script.toString(), "60"));
        plain.addAll(Cli.command(Cli.jar(), "owner"));
        Identity wrapped = owner(plain);
        assertThat(wrapped.name()).isEqualTo("mywrapper");
        assertThat(wrapped.pid()).isNotEqualTo(self);

        List<String> skipping = new ArrayList<>(List.of(script.toString(), "60"));
        skipping.addAll(Cli.command(Cli.jar(), "owner", "--skip", "mywrapper"));
        assertThat(owner(skipping).pid()).isEqualTo(self);
    }

    @Test
    void aWrapperNameLongerThanFifteenBytesMatchesItsTruncatedComm() throws Exception {
        Path script = wrapper("my-long-wrapper-script");
        List<String> plain = new ArrayList<>(List.of(script.toString(), "60"));
        plain.addAll(Cli.command(Cli.jar(), "owner"));
        assertThat(owner(plain).name()).isEqualTo("my-long-wrapper");

        List<String> skipping = new ArrayList<>(List.of(script.toString(), "60"));
        skipping.addAll(Cli.command(Cli.jar(), "owner", "--skip", "my-long-wrapper-script"));
        assertThat(owner(skipping).pid()).isEqualTo(self);
    }

    @Test
    void wrappersInsideShellsAreSkippedTogether() throws Exception {
        Path script = wrapper("mywrapper");
        List<String> command = List.of("bash", "-c",
                "'" + script + "' 60 " + shellCli("owner", "--skip=mywrapper") + "; true");
        assertThat(owner(command).pid()).isEqualTo(self);
    }
}
