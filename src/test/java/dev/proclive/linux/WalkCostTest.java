package dev.proclive.linux;

import dev.proclive.spi.internal.KernelIntrospector;
import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.OwnerResolver;
import dev.proclive.Reason;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A walk of depth d reads d + 1 stat files, plus the executable link and command line of each
 * ancestor whose name is not already skipped: counted at the SPI, and at the file level by
 * the paths the introspector opens.
 */
@org.junit.jupiter.api.condition.DisabledOnOs(org.junit.jupiter.api.condition.OS.WINDOWS)
class WalkCostTest {

    @org.junit.jupiter.api.AfterEach
    void removeLinks() throws java.io.IOException {
        FakeProc.removeLinks(dir);
    }


    @TempDir
    Path dir;

    /** Counts what the walk asks of the Linux introspector, by method name; everything else as it is. */
    static final class Counting {
        final java.util.Map<String, Integer> calls = new java.util.concurrent.ConcurrentHashMap<>();
        final KernelIntrospector introspector;

        Counting(ProcessIntrospector inner) {
            KernelIntrospector real = KernelIntrospector.of(inner);
            introspector = dev.proclive.Forwarding.to(KernelIntrospector.class, method -> {
                calls.merge(method.getName(), 1, Integer::sum);
                return real;
            });
        }

        int of(String method) {
            return calls.getOrDefault(method, 0);
        }
    }

    private static String stat(long pid, String name, long ppid, long start) {
        return pid + " (" + name + ") S " + ppid + " " + pid + " " + pid
                + " 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + start + " 0 0\n";
    }

    /** Every file of a process (or of self's stat) the walk opens, relative to the fake root. */
    private static java.util.function.Consumer<String> perProcess(Path root, List<String> into) {
        return path -> {
            String relative = root.relativize(Path.of(path)).toString();
            if (relative.matches("\\d+/.*") || relative.equals("self/stat")) {
                into.add(relative);
            }
        };
    }

    @Test
    void aWalkOfDepthThreeReadsFourStatFilesAndTwoSmallFilesOfTheOwner() {
        FakeProc proc = new FakeProc(dir);
        // self (1000) -> sh (40) -> bash (30) -> node (20); sh and bash are skipped by their comm
        // alone, so only the owner's exe link and cmdline are read besides the stat files.
        proc.file("self/stat", stat(1000, "java", 40, 900))
                .file("40/stat", stat(40, "sh", 30, 800))
                .file("30/stat", stat(30, "bash", 20, 700))
                .file("20/stat", stat(20, "node", 1, 600))
                .file("20/cmdline", "node\0agent.js\0")
                .link("20/exe", "/usr/bin/node");
        List<String> opened = new ArrayList<>();
        Counting counting = new Counting(proc.introspector(LinuxProcessIntrospectorTest.NEVER, perProcess(dir, opened)));

        Optional<Identity> owner = OwnerResolver.builder().introspector(counting.introspector).build().resolve();

        assertThat(owner).map(Identity::pid).contains(20L);
        assertThat(owner).map(Identity::start).contains("600");
        assertThat(counting.of("self") + counting.of("lookup")).isEqualTo(4);
        assertThat(counting.of("lookupProcess")).isZero();
        assertThat(opened).containsExactly("self/stat", "40/stat", "30/stat", "20/stat", "20/exe", "20/cmdline");
    }

    @Test
    void aHookScriptCostsTwoSmallFilesMore() {
        FakeProc proc = new FakeProc(dir);
        // self -> hook.sh (40, run by its #! line: comm hook.sh, executable dash) -> node (20)
        proc.file("self/stat", stat(1000, "java", 40, 900))
                .file("40/stat", stat(40, "hook.sh", 20, 800))
                .file("40/cmdline", "/bin/sh\0./hook.sh\0")
                .link("40/exe", "/usr/bin/dash")
                .file("20/stat", stat(20, "node", 1, 600))
                .file("20/cmdline", "node\0")
                .link("20/exe", "/usr/bin/node");
        List<String> opened = new ArrayList<>();
        Optional<Identity> owner = OwnerResolver.builder()
                .introspector(proc.introspector(LinuxProcessIntrospectorTest.NEVER, perProcess(dir, opened)))
                .build().resolve();
        assertThat(owner).map(Identity::pid).contains(20L);
        // 40's executable (dash) skips it: its argv[0] is not read
        assertThat(opened).containsExactly("self/stat", "40/stat", "40/exe", "20/stat", "20/exe", "20/cmdline");
    }
}
