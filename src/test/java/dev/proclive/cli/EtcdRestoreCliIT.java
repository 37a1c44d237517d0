package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Cli;
import dev.proclive.Eventually;
import dev.proclive.lease.EtcdCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd restored from an older copy of its data (the same cluster, its revisions back) while a
 * {@code lease run} holds its lease: a newcomer CLI started after the restore, of the same user,
 * is refused (74, saying how to restore and how to clear the mark), and the running command is
 * sent SIGTERM as soon as etcd answers again, not at its next keep-alive a third of the TTL later.
 */
@EnabledOnOs(OS.LINUX)
class EtcdRestoreCliIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    @TempDir
    Path dir;

    /** This user's environment: its state directory, where the CLI keeps its etcd revision marks. */
    private Map<String, String> env() {
        return Map.of("PROCLIVE_STATE_DIR", dir.resolve("state").toString());
    }

    private Cli.Result cli(EtcdCluster etcd, String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(List.of("--etcd", etcd.endpoints().get(0).toString()));
        return Cli.exec(Cli.command(Cli.jar(), args.toArray(new String[0])), new byte[0], env());
    }

    private void moveRevisionOn(EtcdCluster etcd, int times) {
        for (int i = 0; i < times; i++) {
            assertThat(cli(etcd, "lease", "acquire", "elsewhere", "--holder", Long.toString(ProcessHandle.current().pid())).exit())
                    .isZero();
            assertThat(cli(etcd, "lease", "break", "elsewhere").exit()).isZero();
        }
    }

    @Test
    void aNewcomerStartedAfterARestoreIsRefusedAndTheRunningCommandIsStoppedAtOnce() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(Files.createDirectories(dir.resolve("etcd")), 1)) {
            EtcdCluster.Member m = etcd.members.get(0);
            moveRevisionOn(etcd, 1);
            Path older = etcd.copyData(m, dir.resolve("older-copy"));
            moveRevisionOn(etcd, 3);

            List<String> run = new ArrayList<>(Cli.command(Cli.jar(), "lease", "run", "build", "--etcd",
                    etcd.endpoints().get(0).toString(), "--ttl", "90")); // its keep-alive every 30 s
            Path said = dir.resolve("run.out");
            run.addAll(List.of("--", "sh", "-c", "trap 'echo got TERM; kill $! 2>/dev/null; exit 9' TERM; sleep 600 & wait"));
            ProcessBuilder b = new ProcessBuilder(run).redirectErrorStream(true).redirectOutput(said.toFile());
            b.environment().putAll(env());
            Process holder = b.start();
            children.adopt(holder);
            Eventually.until("held", Duration.ofSeconds(60), () -> cli(etcd, "lease", "show", "build").out().contains("\"held\""));

            etcd.restoreData(m, older); // restored from the older copy: same cluster, revisions back

            Cli.Result newcomer = cli(etcd, "lease", "acquire", "build", "--holder", Long.toString(ProcessHandle.current().pid()));
            assertThat(newcomer.exit()).as(newcomer.toString()).isEqualTo(74);
            assertThat(newcomer.err()).contains("etcd's revision went back from", "--bump-revision",
                    dir.resolve("state").toString(), "delete that file");

            assertThat(holder.waitFor(Eventually.scaled(Duration.ofSeconds(5)).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the running command stopped soon after etcd answered again, not at the next keep-alive 30 s later: %s",
                            Files.readString(said, StandardCharsets.UTF_8)).isTrue();
            assertThat(Files.readString(said, StandardCharsets.UTF_8)).contains("is lost", "got TERM");
            assertThat(holder.exitValue()).isEqualTo(9);
        }
    }
}
