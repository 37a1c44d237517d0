package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.Children;
import dev.proclive.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An I/O failure in the middle of a grant, injected by {@code strace} into the CLI: the caller is told
 * it failed, and so nobody holds what nobody was told of.
 */
@EnabledOnOs(OS.LINUX)
class FailedWritesIT {

    @RegisterExtension
    final Children children = new Children();

    @TempDir
    Path tmp;

    /**
     * The record is in place when the guard's fence is forced; that failing (EIO), the grant is
     * ended as released, saying so: it was left to a holder nobody told, which held every newcomer
     * out while it lived.
     */
    @Test
    void aGrantWhoseFenceCannotBeForcedIsReleasedNotLeftToAHolderNobodyTold() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/strace")), "strace injects the failure; .ci/run installs it");
        Cli.Result traced = Cli.exec(List.of("strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=none", "true"), "");
        assumeTrue(traced.exit() == 0, "strace may trace a child here: " + traced);
        String dir = tmp.resolve("leases").toString();
        String told = Long.toString(children.sleeper().pid());
        // fdatasync is the guard's alone: records and the directory are forced with fsync
        List<String> command = new ArrayList<>(List.of("strace", "-f", "-qq", "-o", "/dev/null",
                "-e", "trace=fdatasync", "-e", "inject=fdatasync:error=EIO:when=1"));
        command.addAll(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir, "--holder", told,
                "--print", "fence"));
        Cli.Result failed = Cli.exec(command, "");
        assertThat(failed.exit()).as("the caller is told it failed: %s", failed).isEqualTo(74);
        assertThat(failed.out()).as("no fence handed out").isEmpty();

        Cli.Result shown = Cli.run("lease", "show", "build", "--dir", dir);
        assertThat(shown.out()).as("%s", shown).contains("\"state\":\"released\"", "\"ended\":{\"how\":\"released\"");
        Cli.Result next = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder",
                Long.toString(children.sleeper().pid()), "--print", "fence");
        assertThat(next.exit()).as("the next newcomer is granted though the first holder lives: %s", next).isZero();
        assertThat(Long.parseLong(next.line())).as("above the fence the failed grant wrote").isGreaterThan(1);
    }
    /**
     * What a command prints is its answer: standard output that cannot be written (a full disk) makes it
     * an I/O failure, not a success whose fence or identity went nowhere. A grant so told stands for its
     * holder, whose next acquire is granted again and prints it.
     */
    @Test
    void anAnswerThatCannotBeWrittenIsAnIoFailure() throws Exception {
        assumeTrue(Files.isWritable(Path.of("/dev/full")), "/dev/full fails every write");
        String dir = tmp.resolve("leases").toString();
        String holder = Long.toString(children.sleeper().pid());
        Cli.Result lost = Cli.exec(List.of("sh", "-c", "exec " + Cli.shellQuoted(Cli.command(Cli.jar(), "lease",
                "acquire", "build", "--dir", dir, "--holder", holder, "--print", "fence")) + " >/dev/full"), "");
        assertThat(lost.exit()).as("%s", lost).isEqualTo(74);
        assertThat(lost.err()).contains("standard output", "it had succeeded");
        Cli.Result again = Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", holder, "--print", "fence");
        assertThat(again.exit()).as("%s", again).isZero();
        assertThat(again.line()).isEqualTo("1");

        Cli.Result identity = Cli.exec(List.of("sh", "-c", "exec " + Cli.shellQuoted(Cli.command(Cli.jar(), "identify",
                holder)) + " >/dev/full"), "");
        assertThat(identity.exit()).as("%s", identity).isEqualTo(74);
        Process ended = children.sleeper();
        String identityOfEnded = Cli.run("identify", Long.toString(ended.pid())).line();
        ended.destroyForcibly().waitFor();
        Cli.Result dead = Cli.exec(List.of("sh", "-c", "exec " + Cli.shellQuoted(Cli.command(Cli.jar(), "check",
                identityOfEnded)) + " >/dev/full"), "");
        assertThat(dead.exit()).as("DEAD is an answer of itself, printed or not: %s", dead).isEqualTo(1);
    }
}
