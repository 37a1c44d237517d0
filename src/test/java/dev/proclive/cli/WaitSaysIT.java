package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Cli;
import dev.proclive.Children;
import dev.proclive.Eventually;
import dev.proclive.ProcLive;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wait says that it waits, and for whom, as it begins (one line on stderr, within 1.5 s of the
 * command's start on a quiet machine), and a wait that gives up says it waited: {@code lease acquire
 * --wait}, {@code lease run --wait} and {@code wait}.
 */
@EnabledOnOs(OS.LINUX)
class WaitSaysIT {

    @RegisterExtension
    final Children children = new Children();

    @TempDir
    Path tmp;

    /** When the last {@link #start} began (System.nanoTime). */
    private long startedAt;

    private String dir() {
        return tmp.resolve("leases").toString();
    }

    /** Lease {@code build} held by a new sleeper; the sleeper. */
    private Process held() throws Exception {
        Process holder = children.sleeper();
        Cli.Result r = Cli.run("lease", "acquire", "build", "--dir", dir(), "--holder", Long.toString(holder.pid()));
        assertThat(r.exit()).as(r.err()).isZero();
        return holder;
    }

    /** The first line on stderr of {@code p}, started by {@link #start}: it must come within 1.5 s of that (scaled to this machine). */
    private String firstSaid(Process p) throws Exception {
        long start = startedAt;
        BufferedReader err = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return err.readLine();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Duration bound = Eventually.scaled(Duration.ofMillis(1500));
        try {
            return line.get(bound.toNanos() - (System.nanoTime() - start), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.TimeoutException silent) {
            throw new AssertionError("nothing said within " + bound + " of the start", silent);
        }
    }

    /** A CLI run, started now: its first line on stderr ({@link #firstSaid}) is timed from here. */
    private Process start(String... args) throws Exception {
        startedAt = System.nanoTime();
        Process p = new ProcessBuilder(Cli.command(Cli.jar(), args)).start();
        children.adopt(p);
        p.getOutputStream().close();
        return p;
    }

    @Test
    void aWaitingAcquireSaysForWhomAtOnceAndIsGrantedWhenTheHolderEnds() throws Exception {
        Process holder = held();
        Process me = children.sleeper();
        Process acquire = start("lease", "acquire", "build", "--dir", dir(), "--holder", Long.toString(me.pid()),
                "--wait", "60");
        assertThat(firstSaid(acquire)).isEqualTo("proclive: waiting up to 60 s for lease build: held by pid "
                + holder.pid() + " (sleep) at fence 1");
        holder.destroyForcibly();
        assertThat(acquire.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String rest = new String(acquire.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(acquire.exitValue()).as(rest).isZero();
        assertThat(rest).as("granted: nothing more to say").isEmpty();
    }

    @Test
    void anAcquireThatGivesUpSaysItWaited() throws Exception {
        Process holder = held();
        Cli.Result r = Cli.run("lease", "acquire", "build", "--dir", dir(), "--holder",
                Long.toString(children.sleeper().pid()), "--wait", "1");
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).startsWith("proclive: waiting up to 1 s for lease build: held by pid " + holder.pid())
                .contains("proclive: gave up waiting for lease build after 1 s\n",
                        "proclive: lease build is not granted: held by pid " + holder.pid());
    }

    @Test
    void aHolderAskingAgainIsGrantedAgainWithoutAWordOfWaiting() throws Exception {
        Process holder = held();
        Cli.Result r = Cli.run("lease", "acquire", "build", "--dir", dir(), "--holder", Long.toString(holder.pid()),
                "--wait", "30", "--print", "fence");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.line()).isEqualTo("1");
        assertThat(r.err()).as("it waits for nobody, itself least").isEmpty();
    }

    @Test
    void aFreeLeaseIsTakenWithoutAWordOfWaiting() throws Exception {
        Cli.Result r = Cli.run("lease", "acquire", "build", "--dir", dir(), "--holder",
                Long.toString(children.sleeper().pid()), "--wait", "30");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.err()).isEmpty();
    }

    @Test
    void aWaitingRunSaysForWhomAtOnce() throws Exception {
        Process holder = held();
        Process run = start("lease", "run", "build", "--dir", dir(), "--wait", "60", "--", "true");
        assertThat(firstSaid(run)).isEqualTo("proclive: waiting up to 60 s for lease build: held by pid "
                + holder.pid() + " (sleep) at fence 1");
        holder.destroyForcibly();
        assertThat(run.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(run.exitValue()).isZero();

        Process again = held();
        Cli.Result r = Cli.run("lease", "run", "build", "--dir", dir(), "--wait", "1", "--", "true");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("proclive: waiting up to 1 s for lease build: held by pid " + again.pid(),
                "proclive: gave up waiting for lease build after 1 s\n");
    }

    @Test
    void waitSaysForWhomAtOnceAndThatItGaveUp() throws Exception {
        Process sleeper = children.sleeper();
        String id = new ObjectMapper().writeValueAsString(ProcLive.identify(sleeper.pid()).orElseThrow());
        Process waiting = start("wait", id, "--timeout", "60");
        assertThat(firstSaid(waiting)).isEqualTo("proclive: waiting for pid " + sleeper.pid() + " (sleep) to end, up to 60 s");
        sleeper.destroyForcibly();
        assertThat(waiting.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(waiting.exitValue()).isZero();

        Process alive = children.sleeper();
        String aliveId = new ObjectMapper().writeValueAsString(ProcLive.identify(alive.pid()).orElseThrow());
        Cli.Result r = Cli.run("wait", aliveId, "--timeout", "0.3");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("proclive: waiting for pid " + alive.pid() + " (sleep) to end, up to 0.3 s\n"
                + "proclive: gave up waiting after 0.3 s: pid " + alive.pid() + " (sleep) is still alive\n");
        assertThat(Cli.run("wait", aliveId, "--timeout", "0").err()).as("a timeout of 0 only looks").isEmpty();
    }
}
