package dev.proclive.cli;

import dev.proclive.Cli;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static dev.proclive.Tools.onPath;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.proclive.Identity;
import dev.proclive.Liveness;
import dev.proclive.ProcLive;
import dev.proclive.Reason;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Situations only root can build, built for real: a {@code /proc} with {@code hidepid} in a
 * private mount namespace (a new procfs instance; the host's {@code /proc} is never remounted),
 * a fresh PID namespace, and a PID reused on purpose through {@code ns_last_pid}. Elsewhere these
 * tests skip with the reason.
 */
@EnabledOnOs(OS.LINUX)
class PrivilegedIT {

    @org.junit.jupiter.api.extension.RegisterExtension
    final dev.proclive.Children children = new dev.proclive.Children();

    static final String NOBODY = "65534";

    final ObjectMapper mapper = new ObjectMapper();

    @TempDir
    Path dir;
    Path jar;

    /** Asked in each test, not once for the class: each then shows as skipped, with this reason. */
    static void needsRoot() {
        assumeTrue("root".equals(System.getProperty("user.name")),
                "needs root to mount procfs and create namespaces; runs in CI as root");
        for (String tool : List.of("unshare", "setpriv", "mount")) {
            assumeTrue(onPath(tool), tool + " (util-linux) is needed; .ci/run installs it");
        }
    }

    @BeforeEach
    void copyJar() throws IOException {
        needsRoot();
        jar = Cli.worldReadableCopy(dir); // nobody cannot read root's build tree
    }

    private static String quote(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }

    private String cli(String... args) {
        List<String> words = new ArrayList<>();
        for (String w : Cli.command(jar, args)) {
            words.add(quote(w));
        }
        return String.join(" ", words);
    }

    /** {@code check} of {@code id} as nobody, under a fresh procfs mounted with {@code hidepid=MODE}. */
    private Cli.Result checkAsNobodyUnderHidepid(String mode, Identity id) throws Exception {
        String script = "mount -t proc -o hidepid=" + mode + " proc /proc && exec setpriv --reuid=" + NOBODY
                + " --regid=" + NOBODY + " --clear-groups " + cli("check", mapper.writeValueAsString(id));
        return Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script), "");
    }

    @ParameterizedTest
    @ValueSource(strings = {"invisible", "noaccess"})
    void aHiddenLiveProcessIsAccessDeniedNeverDead(String mode) throws Exception {
        Identity id = ProcLive.identify(children.sleeper().pid()).orElseThrow();
        Cli.Result r = checkAsNobodyUnderHidepid(mode, id);
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"access_denied\"}");
        assertThat(r.exit()).isEqualTo(2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"invisible", "noaccess"})
    void aHiddenExitedProcessIsStillProvenExited(String mode) throws Exception {
        Process sleeper = children.sleeper();
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        sleeper.destroyForcibly();
        assertThat(sleeper.waitFor(10, TimeUnit.SECONDS)).isTrue();
        Cli.Result r = checkAsNobodyUnderHidepid(mode, id);
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"dead\",\"reason\":\"exited\"}");
        assertThat(r.exit()).isEqualTo(1);
    }

    /**
     * Without JNA, kill(2) cannot be asked: a hidden process is then UNKNOWN whether it lives or
     * not — never DEAD without proof, never an exception.
     */
    @Test
    void withoutJnaAHiddenProcessIsUnknownAliveOrNot() throws Exception {
        Path classes = dir.resolve("classes");
        Path main = Path.of(System.getProperty("proclive.testClasses"), "dev", "proclive", "CheckMain.class");
        Files.createDirectories(classes.resolve("dev/proclive"));
        Files.copy(main, classes.resolve("dev/proclive/CheckMain.class"));
        Path library = dir.resolve("proclive.jar");
        Files.copy(Path.of(System.getProperty("proclive.jar")), library);
        try (var files = Files.walk(dir)) {
            files.forEach(f -> f.toFile().setReadable(true, false));
        }
        try (var dirs = Files.walk(dir)) {
            dirs.filter(Files::isDirectory).forEach(d -> d.toFile().setExecutable(true, false));
        }

        Process alive = children.sleeper();
        Process dead = children.sleeper();
        Identity aliveId = ProcLive.identify(alive.pid()).orElseThrow();
        Identity deadId = ProcLive.identify(dead.pid()).orElseThrow();
        dead.destroyForcibly();
        assertThat(dead.waitFor(10, TimeUnit.SECONDS)).isTrue();

        String check = quote(Cli.java()) + " -XX:-UsePerfData -cp " + quote(library + ":" + classes)
                + " dev.proclive.CheckMain ";
        String script = "mount -t proc -o hidepid=invisible proc /proc && exec setpriv --reuid=" + NOBODY
                + " --regid=" + NOBODY + " --clear-groups sh -c " + quote(
                        check + aliveId.pid() + " " + aliveId.start() + "; "
                        + check + deadId.pid() + " " + deadId.start());
        Cli.Result r = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script), "");
        assertThat(r.out().lines()).as(r.err()).containsExactly("UNKNOWN ACCESS_DENIED", "UNKNOWN ACCESS_DENIED");
    }

    @Test
    void waitingForAProcessHidepidHidesIsUnknownAtOnce() throws Exception {
        Identity root = ProcLive.identify(children.sleeper().pid()).orElseThrow();
        String script = "mount -t proc -o hidepid=invisible proc /proc && exec setpriv --reuid=" + NOBODY
                + " --regid=" + NOBODY + " --clear-groups " + cli("wait", mapper.writeValueAsString(root), "--timeout", "20");
        long started = System.nanoTime();
        Cli.Result r = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script), "");
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"access_denied\"}");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(seconds).as("at once, not at the timeout").isLessThan(15);
    }

    @Test
    void theHostsOwnProcessesAreStillReadableUnderHidepidAsTheirOwner() throws Exception {
        // nobody checks a process of its own: hidepid does not hide it, so no kill(2) is needed.
        String script = "mount -t proc -o hidepid=invisible proc /proc && exec setpriv --reuid=" + NOBODY
                + " --regid=" + NOBODY + " --clear-groups sh -c " + quote(
                        "sleep 120 & P=$!; " + cli("identify", "$P").replace("'$P'", "$P") + " > "
                        + quote(dir.resolve("own.json").toString()) + "; " + cli("check") + " < "
                        + quote(dir.resolve("own.json").toString()) + "; echo exit=$?; kill $P");
        dir.toFile().setWritable(true, false);
        Cli.Result r = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script), "");
        assertThat(r.out()).as(r.err()).contains("{\"liveness\":\"alive\",\"reason\":\"matched\"}", "exit=0");
    }

    @Test
    void anIdentityFromTheHostIsUnknownInAFreshPidNamespace() throws Exception {
        Identity id = ProcLive.identify(children.sleeper().pid()).orElseThrow();
        assertThat(id.pidns()).isNotEmpty();
        List<String> command = new ArrayList<>(List.of("unshare", "--pid", "--fork", "--mount-proc"));
        command.addAll(Cli.command(jar, "check", mapper.writeValueAsString(id)));
        Cli.Result r = Cli.exec(command, "");
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_pid_namespace\"}");
        assertThat(r.exit()).isEqualTo(2);
    }

    @Test
    void aProcOfAnotherNamespaceIsTrustedForNothing() throws Exception {
        // unshare --pid without --mount-proc: /proc still shows the parent namespace's pids.
        Process sleeper = children.sleeper();
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        Identity bare = new Identity(id.pid(), id.start(), id.boot(), id.host(), id.name(), "");
        List<String> check = new ArrayList<>(List.of("unshare", "--pid", "--fork"));
        check.addAll(Cli.command(jar, "check", mapper.writeValueAsString(bare)));
        Cli.Result r = Cli.exec(check, "");
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_pid_namespace\"}");

        for (String[] args : new String[][] {{"owner"}, {"identify", Long.toString(sleeper.pid())}}) {
            List<String> command = new ArrayList<>(List.of("unshare", "--pid", "--fork"));
            command.addAll(Cli.command(jar, args));
            assertThat(Cli.exec(command, "").exit()).as(String.join(" ", args)).isEqualTo(3);
        }
    }

    @Test
    void aReallyReusedPidIsDeadPidReused() throws Exception {
        // In a fresh PID namespace: record a sleeper, kill it, make the next fork take its pid
        // through ns_last_pid, then check the old identity against the new process.
        Path json = dir.resolve("id.json");
        String script = String.join("\n",
                "sleep 120 & P=$!",
                cli("identify", "PID") .replace("'PID'", "$P") + " > " + quote(json.toString()) + " || exit 10",
                "kill $P; wait $P",
                "echo $((P - 1)) > /proc/sys/kernel/ns_last_pid",
                "sleep 120 & Q=$!",
                "echo \"first=$P second=$Q\"",
                cli("check") + " < " + quote(json.toString()),
                "echo \"exit=$?\"",
                "kill $Q");
        Cli.Result r = Cli.exec(List.of("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script), "");
        String first = r.out().replaceAll("(?s).*first=(\\d+).*", "$1");
        assertThat(r.out()).as(r.err()).contains("second=" + first + "\n");
        assertThat(r.out()).contains("{\"liveness\":\"dead\",\"reason\":\"pid_reused\"}", "exit=1");
        Identity recorded = mapper.readValue(Files.readString(json), Identity.class);
        assertThat(recorded.pid()).isEqualTo(Long.parseLong(first));
    }

    private String goIdentity(Identity id) throws Exception {
        return mapper.writeValueAsString(new Identity(id.pid(), id.start(), id.boot(), id.host(), id.name(), ""));
    }

    private Identity exitedSleeper() throws Exception {
        Process sleeper = children.sleeper();
        Identity id = ProcLive.identify(sleeper.pid()).orElseThrow();
        sleeper.destroyForcibly();
        assertThat(sleeper.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return id;
    }

    /** {@code check} as nobody inside {@code unshare -U -r}, under a fresh procfs with {@code hidepid=invisible}. */
    private Cli.Result checkAsRootOfAUserNamespaceUnderHidepid(String json) throws Exception {
        String script = "mount -t proc -o hidepid=invisible proc /proc && exec setpriv --reuid=" + NOBODY
                + " --regid=" + NOBODY + " --clear-groups unshare --user --map-root-user " + cli("check", json);
        return Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script), "");
    }

    @Test
    void hidepidStillHidesFromTheRootOfAChildUserNamespace() throws Exception {
        Identity live = ProcLive.identify(children.sleeper().pid()).orElseThrow();
        Cli.Result r = checkAsRootOfAUserNamespaceUnderHidepid(mapper.writeValueAsString(live));
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"access_denied\"}");
        assertThat(r.exit()).isEqualTo(2);

        Cli.Result exited = checkAsRootOfAUserNamespaceUnderHidepid(mapper.writeValueAsString(exitedSleeper()));
        assertThat(exited.line()).as(exited.err()).isEqualTo("{\"liveness\":\"dead\",\"reason\":\"exited\"}");
    }

    @Test
    void anOwnProcessIsNeverDeadFromTheRootOfAChildUserNamespace() throws Exception {
        String script = "mount -t proc -o hidepid=invisible proc /proc && exec setpriv --reuid=" + NOBODY
                + " --regid=" + NOBODY + " --clear-groups sh -c " + quote(
                        "sleep 120 & P=$!; I=$(" + cli("identify", "PID").replace("'PID'", "$P") + "); "
                        + "unshare --user --map-root-user " + cli("check") + " <<EOF\n$I\nEOF\n"
                        + "echo exit=$?; kill $P");
        Cli.Result r = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script), "");
        assertThat(r.out()).as(r.err()).containsAnyOf("{\"liveness\":\"alive\",\"reason\":\"matched\"}",
                "{\"liveness\":\"unknown\",\"reason\":\"access_denied\"}");
        assertThat(r.out()).doesNotContain("dead");
    }

    @Test
    void aTimeNamespaceDoesNotMoveTheFingerprint() throws Exception {
        Process sleeper = children.sleeper();
        Identity outside = ProcLive.identify(sleeper.pid()).orElseThrow();
        List<String> inTimeNs = List.of("unshare", "--time", "--boottime", "1000", "--fork");

        List<String> check = new ArrayList<>(inTimeNs);
        check.addAll(Cli.command(jar, "check", mapper.writeValueAsString(outside)));
        Cli.Result r = Cli.exec(check, "");
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"alive\",\"reason\":\"matched\"}");

        List<String> identify = new ArrayList<>(inTimeNs);
        identify.addAll(Cli.command(jar, "identify", Long.toString(sleeper.pid())));
        Cli.Result inside = Cli.exec(identify, "");
        assertThat(mapper.readValue(inside.line(), Identity.class)).as(inside.err()).isEqualTo(outside);

        Identity forged = new Identity(outside.pid(), Long.toString(Long.parseLong(outside.start()) + 100_000),
                outside.boot(), outside.host(), outside.name(), outside.pidns());
        List<String> checkForged = new ArrayList<>(inTimeNs);
        checkForged.addAll(Cli.command(jar, "check", mapper.writeValueAsString(forged)));
        assertThat(Cli.exec(checkForged, "").line()).isEqualTo("{\"liveness\":\"dead\",\"reason\":\"pid_reused\"}");
    }

    @Test
    void anOffsetOfAFractionOfATickMatchesWithinTwoTicks() throws Exception {
        Path timens = dev.proclive.CPrograms.compile(dir, "timens_exec");
        Process sleeper = children.sleeper();
        Identity outside = ProcLive.identify(sleeper.pid()).orElseThrow();
        for (String nanos : List.of("1000005000000", "-3000000")) {
            List<String> check = new ArrayList<>(List.of(timens.toString(), nanos));
            check.addAll(Cli.command(jar, "check", mapper.writeValueAsString(outside)));
            Cli.Result r = Cli.exec(check, "");
            assertThat(r.line()).as("offset %s ns: %s", nanos, r.err())
                    .isEqualTo("{\"liveness\":\"alive\",\"reason\":\"matched\"}");

            List<String> identify = new ArrayList<>(List.of(timens.toString(), nanos));
            identify.addAll(Cli.command(jar, "identify", Long.toString(sleeper.pid())));
            Identity inside = mapper.readValue(Cli.exec(identify, "").line(), Identity.class);
            assertThat(Long.parseLong(inside.start()) - Long.parseLong(outside.start())).isBetween(0L, 1L);
            // recorded there, a tick late or not, it is the same process here
            assertThat(ProcLive.check(inside)).as("offset %s ns", nanos).isEqualTo(Liveness.ALIVE);
        }
        assertThat(ProcLive.explain(startedAt(outside, 1)).reason()).as("a tick late").isEqualTo(Reason.MATCHED);
        assertThat(ProcLive.explain(startedAt(outside, -1)).reason()).as("a tick early").isEqualTo(Reason.PID_REUSED);
    }

    private static Identity startedAt(Identity id, long ticksLater) {
        return new Identity(id.pid(), Long.toString(Long.parseLong(id.start()) + ticksLater), id.boot(), id.host(),
                id.name(), id.pidns());
    }

    /**
     * Inside a namespace whose negative boottime offset is larger than a process's start, that start
     * is shown wrapped around (below zero, as an unsigned count): neither checked as a reused pid nor
     * recorded.
     */
    @Test
    void aStartWrappedAroundByANegativeOffsetIsNeitherDeadNorRecorded() throws Exception {
        Path timens = dev.proclive.CPrograms.compile(dir, "timens_exec");
        Process sleeper = children.sleeper();
        Identity outside = ProcLive.identify(sleeper.pid()).orElseThrow();
        Thread.sleep(1_000); // the offset may take boottime back to 0.5 s after its start, not below zero
        String nanos = Long.toString(-(Long.parseLong(outside.start()) * 10_000_000L + 500_000_000L));
        List<String> check = new ArrayList<>(List.of(timens.toString(), nanos));
        check.addAll(Cli.command(jar, "check", mapper.writeValueAsString(outside)));
        Cli.Result r = Cli.exec(check, "");
        assertThat(r.line()).as(r.err()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"no_fingerprint\"}");

        List<String> identify = new ArrayList<>(List.of(timens.toString(), nanos));
        identify.addAll(Cli.command(jar, "identify", Long.toString(sleeper.pid())));
        Cli.Result inside = Cli.exec(identify, "");
        assertThat(inside.out()).as(inside.err()).isEmpty();
        assertThat(inside.exit()).isNotZero();
    }

    @Test
    void anIdentityWithoutNamespaceFromTheHostIsNeverDeadInAContainer() throws Exception {
        Identity live = ProcLive.identify(children.sleeper().pid()).orElseThrow();
        for (String json : List.of(goIdentity(live), goIdentity(exitedSleeper()))) {
            List<String> command = new ArrayList<>(List.of("unshare", "--mount", "--pid", "--fork", "--mount-proc"));
            command.addAll(Cli.command(jar, "check", json));
            Cli.Result r = Cli.exec(command, "");
            assertThat(r.line()).as(json + ": " + r.err())
                    .isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"other_pid_namespace\"}");
            assertThat(r.exit()).isEqualTo(2);
        }
    }

    @Test
    void epermIsToldApartInAnyLocale() throws Exception {
        Path locales = dir.resolve("locales");
        assumeTrue(Files.isRegularFile(Path.of("/usr/share/i18n/locales/de_DE")) && onPath("localedef"),
                "needs the locales package to build de_DE.UTF-8; .ci/run installs it");
        Files.createDirectories(locales);
        Process localedef = new ProcessBuilder("localedef", "-i", "de_DE", "-f", "UTF-8",
                locales.resolve("de_DE.UTF-8").toString()).redirectErrorStream(true).start();
        localedef.getInputStream().readAllBytes();
        assertThat(localedef.waitFor()).isIn(0, 1); // 1: built, with warnings
        try (var files = Files.walk(locales)) {
            files.forEach(f -> { f.toFile().setReadable(true, false); f.toFile().setExecutable(true, false); });
        }
        Identity id = ProcLive.identify(children.sleeper().pid()).orElseThrow();
        String script = "mount -t proc -o hidepid=noaccess proc /proc && exec setpriv --reuid=" + NOBODY
                + " --regid=" + NOBODY + " --clear-groups env LOCPATH=" + quote(locales.toString())
                + " LC_ALL=de_DE.UTF-8 sh -c " + quote(cli("check", mapper.writeValueAsString(id))
                + "; cat /proc/1/stat");
        Cli.Result r = Cli.exec(List.of("unshare", "--mount", "--propagation", "private", "sh", "-c", script), "");
        assertThat(r.err()).as("strerror is translated").contains("nicht erlaubt");
        assertThat(r.line()).isEqualTo("{\"liveness\":\"unknown\",\"reason\":\"access_denied\"}");
    }
}
