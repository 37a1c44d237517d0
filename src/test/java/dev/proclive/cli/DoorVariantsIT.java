package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.Children;
import dev.proclive.Cli;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Variants of the round-7 doors that their own tests do not try: a boot id spelled otherwise than
 * the kernel writes it (the {@code "start":"0285663"} door, one field over). The shared directory's
 * variants are {@code SharedGuardIT}'s, the wall clock stepped back again and again
 * {@code LeaseLockOutIT}'s.
 */
@EnabledOnOs(OS.LINUX)
class DoorVariantsIT {

    @RegisterExtension
    final Children children = new Children();

    @TempDir
    Path tmp;

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
}
