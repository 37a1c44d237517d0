package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.LivenessChecker;
import dev.proclive.Liveness;
import dev.proclive.OwnerResolver;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plain owner walk and check of {@link ProcMount}, on trees of fixtures: where they answer,
 * they answer what the general walk and checker answer over the same tree, reading the same files;
 * where the case is not plain, they do not answer.
 */
@DisabledOnOs(OS.WINDOWS)
class ProcMountTest {

    @TempDir
    Path dir;

    @AfterEach
    void removeLinks() throws java.io.IOException {
        FakeProc.removeLinks(dir);
    }

    /** The default skip set as the plain walk takes it. */
    private static final String SKIP = String.join(" ", OwnerResolver.builder().build().skipNames());

    private static String stat(long pid, String name, char state, long ppid, long start) {
        return pid + " (" + name + ") " + state + " " + ppid + " " + pid + " " + pid
                + " 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + start + " 0 0\n";
    }

    private static String stat(long pid, String name, long ppid, long start) {
        return stat(pid, name, 'S', ppid, start);
    }

    private ProcMount mount(FakeProc proc, List<String> opened) {
        return new ProcMount(proc.root.toString(), proc.machineRoot(), opened::add);
    }

    private static Optional<Identity> general(FakeProc proc, List<String> opened) {
        return general(proc, opened, OwnerResolver.DEFAULT_MAX_DEPTH);
    }

    private static Optional<Identity> general(FakeProc proc, List<String> opened, int maxDepth) {
        return OwnerResolver.builder().introspector(proc.introspector(LinuxProcessIntrospectorTest.NEVER, opened::add))
                .maxDepth(maxDepth).build().resolve();
    }

    /** self (1000) -> sh (40) -> bash (30) -> hook.sh (25, run by dash) -> node (20) -> init. */
    private FakeProc hookTree() {
        return hookTreeIn(dir);
    }

    private static FakeProc hookTreeIn(Path dir) {
        return new FakeProc(dir)
                .file("self/stat", stat(1000, "java", 40, 900))
                .file("40/stat", stat(40, "sh", 30, 800))
                .file("30/stat", stat(30, "bash", 25, 700))
                .file("25/stat", stat(25, "hook.sh", 20, 650))
                .file("25/cmdline", "/bin/sh\0./hook.sh\0")
                .link("25/exe", "/usr/bin/dash")
                .file("20/stat", stat(20, "node", 1, 600))
                .file("20/cmdline", "node\0server.js\0")
                .link("20/exe", "/usr/bin/node");
    }

    @Test
    void thePlainOwnerIsTheGeneralWalksReadTheSameWay() {
        FakeProc proc = hookTree();
        List<String> plainOpened = new ArrayList<>();
        List<String> generalOpened = new ArrayList<>();
        Identity plain = mount(proc, plainOpened).owner(SKIP, OwnerResolver.DEFAULT_MAX_DEPTH).orElseThrow();
        Optional<Identity> general = general(proc, generalOpened);
        assertThat(plain).isEqualTo(general.orElseThrow());
        assertThat(plain.pid()).isEqualTo(20);
        assertThat(plain.start()).isEqualTo("600");
        assertThat(plain.host()).isEqualTo("fakehost");
        assertThat(plain.machine()).isEqualTo(FakeProc.FAKE_MACHINE);
        assertThat(plainOpened).as("the files the plain walk opens").isEqualTo(generalOpened);
    }

    @Test
    void anArgv0InTheSkipSetIsSkippedToo() {
        FakeProc proc = hookTree().file("25/cmdline", "-bash\0").link("25/exe", "/opt/hooks/run");
        Identity plain = mount(proc, new ArrayList<>()).owner(SKIP, OwnerResolver.DEFAULT_MAX_DEPTH).orElseThrow();
        assertThat(plain).isEqualTo(general(proc, new ArrayList<>()).orElseThrow());
        assertThat(plain.pid()).isEqualTo(20);
    }

    /** Where the walk plainly ends without an owner, the plain walk says so itself, as the general one does. */
    @Test
    void aWalkThatPlainlyEndsWithoutAnOwnerFindsNoneEitherWay() {
        // init of the initial PID namespace is never an owner
        FakeProc proc = hookTree().file("20/stat", stat(20, "env", 1, 600));
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNotNull().isEmpty();
        assertThat(general(proc, new ArrayList<>())).isEmpty();
        // the top of the tree: a parent outside this PID namespace (pid 0)
        proc = hookTree().file("20/stat", stat(20, "env", 0, 600));
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNotNull().isEmpty();
        assertThat(general(proc, new ArrayList<>())).isEmpty();
        // the depth limit
        assertThat(mount(hookTree(), new ArrayList<>()).owner(SKIP, 3)).isNotNull().isEmpty();
        assertThat(general(hookTree(), new ArrayList<>(), 3)).isEmpty();
        assertThat(mount(hookTree(), new ArrayList<>()).owner(SKIP, 4)).map(Identity::pid).contains(20L);
    }

    @Test
    void whatIsNotPlainIsLeftToTheGeneralWalk() {
        // an ancestor that has exited
        FakeProc proc = hookTree().file("30/stat", stat(30, "bash", 'Z', 25, 700));
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNull();
        assertThat(general(proc, new ArrayList<>())).isEmpty();
        // an ancestor that cannot be read
        proc = hookTree().delete("30/stat");
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNull();
        // a time namespace: start times shown shifted
        proc = hookTree().file("self/timens_offsets", "monotonic 0 0\nboottime 5 0\n");
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNull();
        assertThat(general(proc, new ArrayList<>())).isPresent();
        // a /proc of another PID namespace
        proc = hookTree().file("self/status", "Name:\tjava\nNSpid:\t1000\t7\n");
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNull();
        assertThat(general(proc, new ArrayList<>())).isEmpty();
        // no host name to record
        proc = hookTree().delete("sys/kernel/hostname");
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNull();
        assertThat(general(proc, new ArrayList<>())).isEmpty();
    }

    /**
     * Whether {@code /proc} is plain is read by the plain path itself, without the general view:
     * where it says plain, the view is trusted and unshifted; where the view sees more than one
     * plain spelling of "no offset", it is left to the general path; what it found is kept, a read
     * that may pass is tried again.
     */
    @Test
    void thePlainPathReadsWhetherProcIsPlainAsTheViewDoes() throws java.io.IOException {
        record Case(String name, java.util.function.UnaryOperator<FakeProc> tree, boolean plain) {
        }
        List<Case> cases = List.of(
                new Case("no timens_offsets (before 5.6)", p -> p, true),
                new Case("offsets of zero", p -> p.file("self/timens_offsets", "monotonic 0 0\nboottime 0 0\n"), true),
                new Case("a boottime offset", p -> p.file("self/timens_offsets", "boottime 5 0\n"), false),
                new Case("offsets spelled otherwise", p -> p.file("self/timens_offsets", "boottime -0 0\n"), false),
                new Case("no NSpid line (before 4.1)", p -> p.file("self/status", "Name:\tjava\nPid:\t1000\n"), true),
                new Case("another PID namespace's /proc",
                        p -> p.file("self/status", "Name:\tjava\nNSpid:\t1000\t7\n"), false),
                new Case("self does not resolve", p -> p.delete("self/status"), false));
        for (Case c : cases) {
            Path tree = dir.resolve(c.name().replace(' ', '-').replace('/', '-'));
            FakeProc proc = c.tree().apply(hookTreeIn(tree));
            ProcMount mount = new ProcMount(proc.root.toString(), proc.machineRoot(), null);
            assertThat(mount.owner(SKIP, 12) != null).as(c.name()).isEqualTo(c.plain());
            ProcView view = new ProcMount(proc.root.toString(), proc.machineRoot(), null).view();
            if (c.plain()) {
                assertThat(view.distrust()).as(c.name()).isEmpty();
                assertThat(view.shifted()).as(c.name()).isFalse();
            }
            FakeProc.removeLinks(tree);
        }

        // what was found is kept: a /proc found shifted is not read again
        FakeProc proc = hookTree().file("self/timens_offsets", "boottime 5 0\n");
        ProcMount mount = mount(proc, new ArrayList<>());
        assertThat(mount.owner(SKIP, 12)).isNull();
        proc.delete("self/timens_offsets");
        assertThat(mount.owner(SKIP, 12)).as("kept: a process cannot leave its time namespace").isNull();

        // so is a /proc whose self does not resolve (another PID namespace's)
        FakeProc other = hookTreeIn(dir.resolve("other")).delete("self/status");
        ProcMount otherMount = mount(other, new ArrayList<>());
        assertThat(otherMount.owner(SKIP, 12)).isNull();
        other.file("self/status", "Name:\tjava\nNSpid:\t1000\n");
        assertThat(otherMount.owner(SKIP, 12)).as("kept: a process cannot leave its PID namespace").isNull();
        FakeProc.removeLinks(dir.resolve("other"));

        // an offsets file that cannot be read is tried again
        FakeProc unreadOffsets = hookTreeIn(dir.resolve("offsets"));
        java.nio.file.Files.createDirectories(unreadOffsets.root.resolve("self/timens_offsets")); // EISDIR
        ProcMount offsetsMount = mount(unreadOffsets, new ArrayList<>());
        assertThat(offsetsMount.owner(SKIP, 12)).isNull();
        java.nio.file.Files.delete(unreadOffsets.root.resolve("self/timens_offsets"));
        assertThat(offsetsMount.owner(SKIP, 12)).map(Identity::pid).contains(20L);
        FakeProc.removeLinks(dir.resolve("offsets"));

        // a read that failed in a way that may pass is tried again
        proc.delete("self/status");
        java.nio.file.Files.createDirectories(proc.root.resolve("self/status")); // EISDIR: neither absent nor read
        List<String> opened = new ArrayList<>();
        mount = mount(proc, opened);
        assertThat(mount.owner(SKIP, 12)).isNull();
        java.nio.file.Files.delete(proc.root.resolve("self/status"));
        proc.file("self/status", "Name:\tjava\nNSpid:\t1000\n");
        assertThat(mount.owner(SKIP, 12)).map(Identity::pid).contains(20L);
        assertThat(opened).as("the facts (boot id, machine id) are read once").containsOnlyOnce(
                proc.root + "/sys/kernel/random/boot_id");
    }

    /** A fact read that failed in a way that may pass (here ENOTDIR) is made again, by both paths. */
    @Test
    void aFactThatCouldNotBeReadForAReasonThatMayPassIsReadAgain() throws java.io.IOException {
        FakeProc proc = hookTree();
        String boot = java.nio.file.Files.readString(proc.root.resolve("sys/kernel/random/boot_id")).trim();
        proc.delete("sys/kernel/random/boot_id").delete("sys/kernel/random").file("sys/kernel/random", "a file\n");
        ProcMount mount = mount(proc, new ArrayList<>());
        assertThat(mount.owner(SKIP, 12).orElseThrow().boot()).as("unread: no boot recorded").isEmpty();
        assertThat(mount.view().bootId()).isEmpty();
        proc.delete("sys/kernel/random").file("sys/kernel/random/boot_id", boot + "\n");
        assertThat(mount.owner(SKIP, 12).orElseThrow().boot()).as("read again").isEqualTo(boot);
        assertThat(mount.view().bootId()).contains(boot);
    }

    @Test
    void inAContainerPid1IsAnOwnerUnlessItIsSkipped() {
        FakeProc proc = hookTree().link("self/ns/pid", "pid:[4026532999]").file("20/stat", stat(20, "env", 1, 600))
                .file("1/stat", stat(1, "node", 0, 10)).file("1/cmdline", "node\0");
        Identity plain = mount(proc, new ArrayList<>()).owner(SKIP, 12).orElseThrow();
        assertThat(plain).isEqualTo(general(proc, new ArrayList<>()).orElseThrow());
        assertThat(plain.pid()).isEqualTo(1);
        assertThat(plain.pidns()).isEqualTo("4026532999");
        proc.file("1/stat", stat(1, "tini", 0, 10));
        assertThat(mount(proc, new ArrayList<>()).owner(SKIP, 12)).isNotNull().isEmpty();
        assertThat(general(proc, new ArrayList<>())).isEmpty();
    }

    @Test
    void plainlyAliveOnlyWhereTheCheckerSaysAlive() {
        FakeProc proc = hookTree();
        ProcMount mount = mount(proc, new ArrayList<>());
        LivenessChecker checker = LivenessChecker.of(proc.introspector(LinuxProcessIntrospectorTest.NEVER));
        Identity owner = mount.owner(SKIP, 12).orElseThrow();
        assertThat(mount.alive(owner)).isTrue();
        assertThat(checker.check(owner)).isEqualTo(Liveness.ALIVE);
        // a start a tick late is the same process to the checker (a recorder in a time namespace may write it)
        assertThat(checker.check(new Identity(20, "601", owner.boot(), owner.host(), "", owner.pidns(), owner.machine())))
                .isEqualTo(Liveness.ALIVE);
        List<Identity> not = List.of(
                new Identity(20, "599", owner.boot(), owner.host(), "", owner.pidns(), owner.machine()),
                new Identity(20, "602", owner.boot(), owner.host(), "", owner.pidns(), owner.machine()),
                new Identity(20, "0600", owner.boot(), owner.host(), "", owner.pidns(), owner.machine()),
                new Identity(20, "600", "another-boot", owner.host(), "", owner.pidns(), owner.machine()),
                new Identity(20, "600", owner.boot(), "otherhost", "", owner.pidns(), owner.machine()),
                new Identity(20, "600", owner.boot(), owner.host(), "", "4026532999", owner.machine()),
                new Identity(20, "600", owner.boot(), owner.host(), "", owner.pidns(), "f".repeat(32)),
                new Identity(21, "600", owner.boot(), owner.host(), "", owner.pidns(), owner.machine()),
                new Identity(0, "600", "", "", "", ""));
        for (Identity id : not) {
            assertThat(mount.alive(id)).as(id.toString()).isFalse();
            assertThat(checker.check(id)).as(id.toString()).isNotEqualTo(Liveness.ALIVE);
        }
        proc.file("20/stat", stat(20, "node", 'Z', 1, 600));
        assertThat(mount.alive(owner)).as("a zombie").isFalse();
    }

    @Test
    void aNameIsOneOfTheWordsOnlyWhole() {
        String words = "sh bash env s6-svscan";
        assertThat(ProcMount.named("sh", words)).isTrue();
        assertThat(ProcMount.named("bash", words)).isTrue();
        assertThat(ProcMount.named("s6-svscan", words)).isTrue();
        assertThat(ProcMount.named("env", words)).isTrue();
        assertThat(ProcMount.named("s", words)).isFalse();
        assertThat(ProcMount.named("ash", words)).isFalse();
        assertThat(ProcMount.named("bas", words)).isFalse();
        assertThat(ProcMount.named("s6", words)).isFalse();
        assertThat(ProcMount.named("sh bash", words)).as("a comm may hold spaces").isFalse();
        assertThat(ProcMount.named("", words)).isFalse();
        assertThat(ProcMount.named("python3", words)).isFalse();
    }
}
