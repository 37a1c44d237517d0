package dev.proclive.cli;

import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hooks as they run for real: an agent-like process (a Python runtime, or a script named like an
 * agent) runs a hook through a shell, a {@code #!} script or a launcher, and the hook asks for its
 * owner. Every chain must resolve to the agent.
 */
@EnabledOnOs(OS.LINUX)
class HookChainIT {

    static final String NOBODY = "65534";

    final ObjectMapper mapper = new ObjectMapper();

    @TempDir
    Path dir;
    Path jar;
    Path agentScript;

    @BeforeEach
    void agent() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "python3 plays the agent; it is in /usr/bin here");
        jar = Cli.worldReadableCopy(dir);
        // Prints its own pid, then runs its arguments as a child and waits, as agents run hooks.
        agentScript = script("agent", "#!/usr/bin/python3\n"
                + "import os, subprocess, sys\n"
                + "print(os.getpid(), flush=True)\n"
                + "sys.exit(subprocess.run(sys.argv[1:]).returncode)\n");
    }

    private Path script(String name, String text) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        p.toFile().setReadable(true, false);
        p.toFile().setExecutable(true, false);
        return p;
    }

    /** The CLI command line, quoted for a shell. */
    private String cli(String... args) {
        List<String> words = new ArrayList<>();
        for (String w : Cli.command(jar, args)) {
            words.add("'" + w.replace("'", "'\\''") + "'");
        }
        return String.join(" ", words);
    }

    private List<String> cliWords(String... args) {
        return Cli.command(jar, args);
    }

    /** Runs {@code hook} under the agent; asserts the owner printed is the agent. */
    private Identity ownerUnder(List<String> agent, List<String> hook) {
        List<String> command = new ArrayList<>(agent);
        command.addAll(hook);
        Cli.Result r = Cli.exec(command, "");
        List<String> lines = r.out().lines().toList();
        assertThat(lines).as("%s: %s", hook, r.err()).hasSize(2);
        Identity owner;
        try {
            owner = mapper.readValue(lines.get(1), Identity.class);
        } catch (Exception e) {
            throw new AssertionError(r.out(), e);
        }
        assertThat(owner.pid()).as("owner of %s: %s", hook, r.err()).isEqualTo(Long.parseLong(lines.get(0)));
        return owner;
    }

    /** The agent as a runtime ({@code python3 agent}) and as a script named like an agent. */
    private List<List<String>> agents() {
        return List.of(List.of("/usr/bin/python3", agentScript.toString()), List.of(agentScript.toString()));
    }

    private void assertEveryAgentOwns(List<String> hook) {
        for (List<String> agent : agents()) {
            Identity owner = ownerUnder(agent, hook);
            assertThat(owner.name()).isIn("python3", "agent");
        }
    }

    @Test
    void throughShDashC() {
        assertEveryAgentOwns(List.of("sh", "-c", cli("owner") + "; true"));
    }

    @Test
    void throughAShebangShScript() throws Exception {
        Path hook = script("hook.sh", "#!/bin/sh\n" + cli("owner") + "\nstatus=$?\nexit $status\n");
        assertEveryAgentOwns(List.of(hook.toString()));
    }

    @Test
    void throughAnEnvBashScript() throws Exception {
        Path hook = script("hook-env", "#!/usr/bin/env bash\n" + cli("owner") + "\nstatus=$?\nexit $status\n");
        assertEveryAgentOwns(List.of(hook.toString()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"timeout 60", "nice", "env HOOK=1", "nohup", "setsid --wait", "stdbuf -o0"})
    void throughALauncher(String launcher) {
        List<String> hook = new ArrayList<>(List.of(launcher.split(" ")));
        hook.addAll(cliWords("owner"));
        assertEveryAgentOwns(hook);
    }

    @Test
    void throughXargs() {
        assertEveryAgentOwns(List.of("sh", "-c", "echo --skip=unused | xargs " + cli("owner")));
    }

    @Test
    void throughFlock() {
        List<String> hook = new ArrayList<>(List.of("flock", dir.resolve("lock").toString()));
        hook.addAll(cliWords("owner"));
        assertEveryAgentOwns(hook);
    }

    @Test
    void throughAUserWrapperGivenWithSkip() throws Exception {
        Path wrapper = dir.resolve("hookrunner"); // a program of its own: none of its names is skipped
        Files.copy(Path.of(OwnerChainIT.onPath("timeout")), wrapper);
        wrapper.toFile().setExecutable(true, false);
        List<String> hook = new ArrayList<>(List.of(wrapper.toString(), "60"));
        hook.addAll(cliWords("owner", "--skip", "hookrunner"));
        assertEveryAgentOwns(hook);

        List<String> unskipped = new ArrayList<>(List.of(wrapper.toString(), "60"));
        unskipped.addAll(cliWords("owner"));
        Cli.Result r = Cli.exec(concat(agents().get(0), unskipped), "");
        assertThat(r.out().lines().skip(1).findFirst().orElse("")).contains("\"name\":\"hookrunner\"");
    }

    @Test
    void theHookRunningAsAnotherUser() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run the hook as nobody");
        Path hook = script("hook.sh", "#!/bin/sh\n" + cli("owner") + "\nstatus=$?\nexit $status\n");
        dir.toFile().setExecutable(true, false);
        assertEveryAgentOwns(List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups",
                hook.toString()));
    }

    @Test
    void aRuntimeHookAsksForTheOwnerOfItsOwnPid() throws Exception {
        // A Python hook is no shell: it would be its own owner, so it asks with --of its pid.
        Path hook = script("hook.py", "#!/usr/bin/python3\nimport os, subprocess\n"
                + "subprocess.run(" + pythonList(cliWords("owner", "--of")) + " + [str(os.getpid())])\n");
        assertEveryAgentOwns(List.of(hook.toString()));
    }

    @Test
    void shellsDeeperThanTheDepthLimitGiveNoOwnerAndTheTraceSaysWhy() throws Exception {
        // Each level is a shell that runs the next as a child: 14 shells between agent and hook.
        Path deep = script("deep.sh", "#!/bin/sh\nif [ \"$1\" -gt 0 ]; then sh \"$0\" $(($1 - 1)); true; else "
                + cli("owner", "--trace") + "; echo exit=$?; fi\n");
        Cli.Result r = Cli.exec(concat(agents().get(1), List.of("sh", deep.toString(), "13")), "");
        assertThat(r.out()).as(r.err()).contains("exit=3").doesNotContain("{");
        assertThat(r.err()).contains("depth limit (12 ancestors)").doesNotContain("proclive: owner");
    }

    @Test
    void theTraceTellsEachStep() throws Exception {
        Path hook = script("hook.sh", "#!/bin/sh\n" + cli("owner", "--trace") + "\nstatus=$?\nexit $status\n");
        Cli.Result r = Cli.exec(concat(agents().get(0), List.of(hook.toString())), "");
        List<String> trace = r.err().lines().toList();
        assertThat(trace).hasSize(3);
        assertThat(trace.get(0)).startsWith("proclive: start").contains(" java ");
        assertThat(trace.get(1)).startsWith("proclive: skipped").contains("hook.sh")
                .containsAnyOf("executable \"dash\"", "executable \"bash\"", "argv[0] \"sh\"");
        assertThat(trace.get(2)).startsWith("proclive: owner").contains("python3");
        assertThat(r.err()).matches("\\p{ASCII}*");
    }

    private static String pythonList(List<String> words) {
        StringBuilder b = new StringBuilder("[");
        for (String w : words) {
            b.append(b.length() > 1 ? ", " : "").append('\'').append(w.replace("\\", "\\\\").replace("'", "\\'")).append('\'');
        }
        return b.append(']').toString();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
