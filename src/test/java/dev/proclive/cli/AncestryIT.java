package dev.proclive.cli;

import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code proclive ancestry} and {@code ancestor} in real chains: an agent (a Python runtime) runs
 * {@code sh}, which runs the CLI; a {@code prepare-commit-msg} hook under {@code git commit} run by
 * the agent (whose owner is the agent, not {@code git}); an outer agent's identity asked about from
 * inside a new PID namespace (unknown, never "not an ancestor").
 */
@EnabledOnOs(OS.LINUX)
class AncestryIT {

    final ObjectMapper mapper = new ObjectMapper();

    @TempDir
    Path dir;
    Path jar;
    Path agent;

    @BeforeEach
    void agent() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "python3 plays the agent; it is in /usr/bin here");
        jar = Cli.worldReadableCopy(dir);
        // Prints its own identity (through the CLI), then runs its arguments through sh and waits.
        agent = dir.resolve("agent");
        Files.writeString(agent, "#!/usr/bin/python3\n"
                + "import os, subprocess, sys\n"
                + "me = subprocess.run(" + pyList(Cli.command(jar, "identify")) + " + [str(os.getpid())],"
                + " capture_output=True, text=True).stdout.strip()\n"
                + "print(me, flush=True)\n"
                + "os.environ['AGENT'] = me\n"
                + "sys.exit(subprocess.run(['sh', '-c', sys.argv[1]]).returncode)\n");
        agent.toFile().setExecutable(true, false);
    }

    private static String pyList(List<String> words) {
        StringBuilder b = new StringBuilder("[");
        for (String w : words) {
            b.append(b.length() == 1 ? "" : ", ").append('\'').append(w.replace("\\", "\\\\").replace("'", "\\'")).append('\'');
        }
        return b.append(']').toString();
    }

    private String cli(String... args) {
        return Cli.shellQuoted(Cli.command(jar, args));
    }

    @Test
    void anAgentRunningShRunningTheCliIsItsAncestorAtDepthOne() throws Exception {
        Cli.Result r = Cli.exec(List.of(agent.toString(), cli("ancestor") + " \"$AGENT\"; echo \"exit=$?\"; "
                + cli("ancestry")), "");
        List<String> lines = r.out().lines().toList();
        assertThat(lines).as(r.err()).hasSize(4);
        JsonNode me = mapper.readTree(lines.get(0));
        assertThat(mapper.readTree(lines.get(1))).isEqualTo(mapper.readTree("{\"relation\":\"ancestor\",\"depth\":1}"));
        assertThat(lines.get(2)).isEqualTo("exit=0");
        JsonNode chain = mapper.readTree(lines.get(3));
        assertThat(chain.path("chain").get(0).path("name").asText()).isEqualTo("sh");
        assertThat(chain.path("chain").get(1).path("pid").asLong()).isEqualTo(me.path("pid").asLong());
        assertThat(chain.path("complete").asBoolean()).as("reached pid 1").isTrue();
    }

    /**
     * outer agent → sh → inner agent → sh → the CLI, a stranger beside: the nearest of the three
     * sessions' owners is the inner agent, at depth 1; the same owner under two keys is ambiguous; a
     * stranger alone is none.
     */
    @Test
    void theNearestOfSeveralSessionsIsTheInnerAgent() throws Exception {
        String line = "{\"key\":\"%s\",\"owner\":%s}\\n";
        String inner = "sleep 30 & S=$(" + cli("identify") + " $!); "
                + "printf '" + String.format(line, "outer", "%s") + String.format(line, "inner", "%s")
                + String.format(line, "stranger", "%s") + "' \"$OUTER\" \"$AGENT\" \"$S\" | " + cli("ancestor", "--nearest")
                + "; echo \"exit=$?\"; "
                + "printf '" + String.format(line, "a", "%s") + String.format(line, "b", "%s") + "' \"$AGENT\" \"$AGENT\" | "
                + cli("ancestor", "--nearest") + "; echo \"exit=$?\"; "
                + "printf '" + String.format(line, "stranger", "%s") + "' \"$S\" | " + cli("ancestor", "--nearest")
                + "; echo \"exit=$?\"; kill $!";
        Cli.Result r = Cli.exec(List.of(agent.toString(), "OUTER=\"$AGENT\" " + Cli.shellQuoted(List.of(agent.toString(), inner))), "");
        List<String> lines = r.out().lines().toList();
        assertThat(lines).as("%s %s", r.out(), r.err()).hasSize(8);
        assertThat(mapper.readTree(lines.get(2))).isEqualTo(mapper.readTree("{\"nearest\":\"inner\",\"depth\":1}"));
        assertThat(lines.get(3)).isEqualTo("exit=0");
        assertThat(mapper.readTree(lines.get(4))).isEqualTo(mapper.readTree(
                "{\"nearest\":null,\"relation\":\"ambiguous\",\"keys\":[\"a\",\"b\"],\"depth\":1}"));
        assertThat(lines.get(5)).isEqualTo("exit=2");
        assertThat(mapper.readTree(lines.get(6))).isEqualTo(mapper.readTree("{\"nearest\":null,\"relation\":\"none\"}"));
        assertThat(lines.get(7)).isEqualTo("exit=1");
    }

    /**
     * outer agent → sh → inner agent → sh → the CLI, the inner agent's identity recorded without its
     * start, or with a start the kernel never writes (a leading zero): the outer agent is not known to
     * be the nearest, so the answer is unknown, never the outer session.
     */
    @Test
    void anInnerOwnerThatCannotBeJudgedMakesTheNearestUnknownNotTheOuterOne() throws Exception {
        String line = "{\"key\":\"%s\",\"owner\":%s}\\n";
        String pair = "printf '" + String.format(line, "outer", "%s") + String.format(line, "inner", "%s") + "' \"$OUTER\" ";
        String inner = "BARE=$(printf '%s' \"$AGENT\" | sed 's/\"start\":\"[0-9]*\"/\"start\":\"\"/'); "
                + "PADDED=$(printf '%s' \"$AGENT\" | sed 's/\"start\":\"/\"start\":\"0/'); "
                + pair + "\"$BARE\" | " + cli("ancestor", "--nearest") + "; echo \"exit=$?\"; "
                + pair + "\"$PADDED\" | " + cli("ancestor", "--nearest") + "; echo \"exit=$?\"; "
                + pair + "\"$AGENT\" | " + cli("ancestor", "--nearest") + "; echo \"exit=$?\"";
        Cli.Result r = Cli.exec(List.of(agent.toString(), "OUTER=\"$AGENT\" " + Cli.shellQuoted(List.of(agent.toString(), inner))), "");
        List<String> lines = r.out().lines().toList();
        assertThat(lines).as("%s %s", r.out(), r.err()).hasSize(8);
        assertThat(mapper.readTree(lines.get(2))).isEqualTo(mapper.readTree(
                "{\"nearest\":null,\"relation\":\"unknown\",\"reason\":\"no_fingerprint\"}"));
        assertThat(lines.get(3)).isEqualTo("exit=2");
        assertThat(mapper.readTree(lines.get(4))).isEqualTo(mapper.readTree(
                "{\"nearest\":null,\"relation\":\"unknown\",\"reason\":\"no_fingerprint\"}"));
        assertThat(lines.get(5)).isEqualTo("exit=2");
        assertThat(mapper.readTree(lines.get(6))).as("judged, it is found").isEqualTo(
                mapper.readTree("{\"nearest\":\"inner\",\"depth\":1}"));
        assertThat(lines.get(7)).isEqualTo("exit=0");
    }

    @Test
    void oneNotAncestorLineOrTwoExitAlikeOnStdin() throws Exception {
        Path lines = dir.resolve("owners.jsonl");
        Process stranger = new ProcessBuilder("sleep", "30").start();
        try {
            String s = Cli.run("identify", Long.toString(stranger.pid())).out().strip();
            Files.writeString(lines, s + "\n");
            Cli.Result one = Cli.exec(List.of("sh", "-c", cli("ancestor") + " < " + Cli.shellQuoted(List.of(lines.toString()))), "");
            Files.writeString(lines, s + "\n" + s + "\n");
            Cli.Result two = Cli.exec(List.of("sh", "-c", cli("ancestor") + " < " + Cli.shellQuoted(List.of(lines.toString()))), "");
            assertThat(one.exit()).as("one line, not an ancestor: %s", one.err()).isEqualTo(1);
            assertThat(one.out()).isEqualTo("{\"relation\":\"not_ancestor\"}\n");
            assertThat(two.exit()).as("two such lines mean the same: %s", two.err()).isEqualTo(1);
            assertThat(two.out().lines()).hasSize(2);
        } finally {
            stranger.destroyForcibly();
        }
    }

    @Test
    void jsonLinesAreAnsweredInOrderFromOneWalk() throws Exception {
        Path lines = dir.resolve("owners.jsonl");
        Files.writeString(lines, "");
        String script = "printf '%s\\n{\"pid\":999999,\"start\":\"1\",\"host\":\"elsewhere\"}\\n%s\\n' \"$AGENT\""
                + " '{\"pid\":" + ProcessHandle.current().pid() + ",\"start\":\"" + dev.proclive.ProcLive.current()
                .orElseThrow().start() + "\"}' | " + cli("ancestor");
        Cli.Result r = Cli.exec(List.of(agent.toString(), script), "");
        List<String> out = r.out().lines().toList();
        assertThat(out).as(r.err()).hasSize(4);
        assertThat(out.subList(1, 4)).containsExactly("{\"relation\":\"ancestor\",\"depth\":1}",
                "{\"relation\":\"unknown\",\"reason\":\"other_host\"}", "{\"relation\":\"ancestor\",\"depth\":2}");
    }

    @Test
    void aCommitHooksOwnerIsTheAgentNotGitAndTheAgentIsItsAncestor() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/git")), "git runs the hook; .ci/run installs it");
        Path repo = dir.resolve("repo");
        Files.createDirectories(repo);
        Path hook = repo.resolve(".git/hooks/prepare-commit-msg");
        String init = "cd " + Cli.shellQuoted(List.of(repo.toString())) + " && git init -q . && git config user.email t@e"
                + " && git config user.name t && ";
        Cli.Result made = Cli.exec(List.of("sh", "-c", init + "true"), "");
        assertThat(made.exit()).as(made.err()).isZero();
        Path seen = dir.resolve("seen");
        Files.writeString(hook, "#!/bin/sh\n" + cli("owner") + " > " + seen + ".owner\n"
                + cli("ancestor") + " \"$AGENT\" > " + seen + ".ancestor\n");
        hook.toFile().setExecutable(true, false);
        Cli.Result commit = Cli.exec(List.of(agent.toString(), "cd " + Cli.shellQuoted(List.of(repo.toString()))
                + " && git commit -q --allow-empty -m test"), "");
        assertThat(commit.exit()).as(commit.err()).isZero();
        JsonNode me = mapper.readTree(commit.out().lines().findFirst().orElseThrow());
        JsonNode owner = mapper.readTree(Files.readString(Path.of(seen + ".owner")));
        assertThat(owner.path("pid").asLong()).as("the agent, not git: %s", owner).isEqualTo(me.path("pid").asLong());
        JsonNode ancestor = mapper.readTree(Files.readString(Path.of(seen + ".ancestor")));
        assertThat(ancestor.path("relation").asText()).isEqualTo("ancestor");
        assertThat(ancestor.path("depth").asInt()).as("hook (sh) 0, git 1 or more, then the agent").isGreaterThanOrEqualTo(2);
    }

    @Test
    void anOuterAgentSeenFromANewPidNamespaceIsUnknownNeverNotAnAncestor() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root for a new PID namespace (unshare -pf)");
        List<String> inside = new ArrayList<>(List.of("unshare", "-pf", "--mount-proc", "sh", "-c"));
        inside.add(cli("ancestor") + " \"$AGENT\"; echo \"exit=$?\"");
        Cli.Result r = Cli.exec(List.of(agent.toString(), Cli.shellQuoted(inside)), "");
        List<String> lines = r.out().lines().toList();
        assertThat(lines).as(r.err()).hasSize(3);
        assertThat(mapper.readTree(lines.get(1)).path("relation").asText()).isEqualTo("unknown");
        assertThat(mapper.readTree(lines.get(1)).path("reason").asText()).isEqualTo("other_pid_namespace");
        assertThat(lines.get(2)).isEqualTo("exit=2");
    }
}
