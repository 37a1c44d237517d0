package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static dev.proclive.Tools.onPath;
import static dev.proclive.Tools.libfaketime;

import dev.proclive.Children;
import dev.proclive.Cli;
import dev.proclive.Eventually;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Variants of the round-7 doors that their own tests do not try: a boot id spelled otherwise than
 * the kernel writes it (the {@code "start":"0285663"} door, one field over), and a wall clock
 * stepped back again and again during a wait (libfaketime). The shared directory's variants are
 * {@code SharedGuardIT}'s.
 */
@EnabledOnOs(OS.LINUX)
class DoorVariantsIT {


    @RegisterExtension
    final Children children = new Children();

    @TempDir
    Path tmp;
    final List<Process> started = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : started) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static final Pattern BOOT = Pattern.compile("\"boot\":\"([^\"]*)\"");

    /** {@code identity} with its boot id replaced by what {@code respell} makes of it. */
    private static String withBoot(String identity, java.util.function.UnaryOperator<String> respell) {
        Matcher m = BOOT.matcher(identity);
        assumeTrue(m.find(), "an identity with a boot id: " + identity);
        return identity.substring(0, m.start(1)) + respell.apply(m.group(1)) + identity.substring(m.end(1));
    }

    private String identity(long pid) {
        Cli.Result r = Cli.run("identify", Long.toString(pid));
        assertThat(r.exit()).as("identify: %s", r).isZero();
        return r.out().strip();
    }

    @Test
    void aBootIdSpelledOtherwiseThanTheKernelWritesItIsNoProofOfAReboot() throws Exception {
        String live = identity(children.sleeper().pid());
        for (String respelled : List.of(withBoot(live, b -> b.toUpperCase(Locale.ROOT)), withBoot(live, b -> " " + b))) {
            Cli.Result r = Cli.run("check", respelled);
            assertThat(r.exit()).as("a live process is never DEAD: %s -> %s", respelled, r).isNotEqualTo(1);
        }
    }

    @Test
    void aHolderWhoseRecordedBootIsSpelledOtherwiseKeepsItsLease() throws Exception {
        Path dir = tmp.resolve("leases");
        long holder = children.sleeper().pid();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir.toString(), "--holder", Long.toString(holder)).exit())
                .isZero();
        Path record = dir.resolve("build.lease");
        String text = Files.readString(record, StandardCharsets.UTF_8);
        int holderAt = text.indexOf("\"holder\":");
        int writerAt = text.indexOf("\"writer\":");
        assumeTrue(holderAt >= 0 && writerAt > holderAt, "a record with its holder before its writer: " + text);
        String holderPart = withBoot(text.substring(holderAt, writerAt), b -> b.toUpperCase(Locale.ROOT));
        Files.writeString(record, text.substring(0, holderAt) + holderPart + text.substring(writerAt), StandardCharsets.UTF_8);

        Cli.Result newcomer = Cli.run("lease", "acquire", "build", "--dir", dir.toString(),
                "--holder", Long.toString(children.sleeper().pid()));
        assertThat(newcomer.exit()).as("not granted while its holder %d runs: %s", holder, newcomer).isNotZero();
    }

    @Test
    void nearestIsUnknownPastAnOwnerWhoseBootIsSpelledOtherwise() throws Exception {
        // the CLI runs under sh, which runs under this JVM: this JVM is the outer owner, sh the inner
        // one, recorded with its boot id upper-cased
        String outer = identity(ProcessHandle.current().pid());
        String cli = Cli.shellQuoted(Cli.command(Cli.jar()));
        String script = "me=$(" + cli + " identify $$)\n"
                + "boot=$(printf %s \"$me\" | sed -n 's/.*\"boot\":\"\\([^\"]*\\)\".*/\\1/p')\n"
                + "up=$(printf %s \"$boot\" | tr a-f A-F)\n"
                + "inner=$(printf %s \"$me\" | sed \"s/$boot/$up/\")\n"
                + "printf '{\"key\":\"outer\",\"owner\":%s}\\n{\"key\":\"inner\",\"owner\":%s}\\n' \"$OUTER\" \"$inner\""
                + " | " + cli + " ancestor --nearest\n";
        Cli.Result r = Cli.exec(List.of("sh", "-c", script), new byte[0], Map.of("OUTER", outer));
        assertThat(r.out()).as("the inner owner (sh) may be the nearest: %s", r).doesNotContain("\"nearest\":\"outer\"");
        assertThat(r.exit()).as("unknown: %s", r).isEqualTo(2);
    }

    @Test
    void aWallClockSteppedBackAgainAndAgainNeverStretchesAWait() throws Exception {
        assumeTrue(onPath("faketime"), "faketime (libfaketime) is needed");
        String lib = libfaketime();
        assumeTrue(lib.contains("libfaketime"), "faketime sets no LD_PRELOAD of libfaketime here: " + lib);
        String dir = tmp.resolve("leases").toString();
        assertThat(Cli.run("lease", "acquire", "build", "--dir", dir, "--holder", Long.toString(children.sleeper().pid()))
                .exit()).isZero();
        Path offset = Files.writeString(tmp.resolve("offset"), "+0\n");
        ProcessBuilder builder = new ProcessBuilder(Cli.command(Cli.jar(), "lease", "acquire", "build", "--dir", dir,
                "--holder", Long.toString(children.sleeper().pid()), "--wait", "5"))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        builder.environment().put("LD_PRELOAD", lib);
        builder.environment().put("FAKETIME_TIMESTAMP_FILE", offset.toString());
        builder.environment().put("FAKETIME_NO_CACHE", "1");
        long start = System.nanoTime();
        Process waiter = builder.start();
        started.add(waiter);
        Eventually.until("the waiter queued", Duration.ofSeconds(30), () -> Files.exists(Path.of(dir, "build.queue")));
        Duration most = Eventually.scaled(Duration.ofSeconds(10));
        // an hour further back every 1.5 s, for as long as the wait may take at most
        for (int hours = 1; waiter.isAlive() && System.nanoTime() - start < most.toNanos(); hours++) {
            Files.writeString(offset, "-" + hours + "h\n");
            waiter.waitFor(1500, TimeUnit.MILLISECONDS);
        }
        assertThat(waiter.isAlive()).as("--wait 5 ended within %s though the clock kept stepping back", most).isFalse();
        assertThat(waiter.exitValue()).as("still held by its live holder").isEqualTo(1);
    }
}
