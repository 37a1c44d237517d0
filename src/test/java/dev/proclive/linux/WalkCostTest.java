package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.OwnerResolver;
import dev.proclive.Reason;
import dev.proclive.spi.ProcessIntrospector;
import dev.proclive.spi.ProcessLookup;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A walk of depth d reads d + 1 stat files and nothing else: counted at the SPI, and proven at
 * the file level by a procfs tree that holds no status file for any process of the chain.
 */
@org.junit.jupiter.api.condition.DisabledOnOs(org.junit.jupiter.api.condition.OS.WINDOWS)
class WalkCostTest {

    @TempDir
    Path dir;

    /** Counts what the walk asks of the Linux introspector. */
    static final class Counting implements ProcessIntrospector {
        final ProcessIntrospector inner;
        int self;
        int lookup;
        int lookupProcess;

        Counting(ProcessIntrospector inner) {
            this.inner = inner;
        }

        @Override
        public ProcessLookup lookup(long pid) {
            lookup++;
            return inner.lookup(pid);
        }

        @Override
        public ProcessLookup lookupProcess(long pid) {
            lookupProcess++;
            return inner.lookupProcess(pid);
        }

        @Override
        public ProcessLookup self() {
            self++;
            return inner.self();
        }

        @Override
        public Optional<String> bootId() {
            return inner.bootId();
        }

        @Override
        public Optional<String> hostName() {
            return inner.hostName();
        }

        @Override
        public Optional<String> pidNamespace() {
            return inner.pidNamespace();
        }

        @Override
        public boolean nameMatches(String processName, String name) {
            return inner.nameMatches(processName, name);
        }
    }

    private static String stat(long pid, String name, long ppid, long start) {
        return pid + " (" + name + ") S " + ppid + " " + pid + " " + pid
                + " 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 " + start + " 0 0\n";
    }

    @Test
    void aWalkOfDepthThreeReadsFourStatFilesAndNothingElse() {
        FakeProc proc = new FakeProc(dir);
        // self (1000) → sh (40) → bash (30) → node (20); only stat files exist for them.
        proc.file("self/stat", stat(1000, "java", 40, 900))
                .file("40/stat", stat(40, "sh", 30, 800))
                .file("30/stat", stat(30, "bash", 20, 700))
                .file("20/stat", stat(20, "node", 1, 600));
        Counting counting = new Counting(proc.introspector(LinuxProcessIntrospectorTest.NEVER));

        Optional<Identity> owner = OwnerResolver.builder().introspector(counting).build().resolve();

        assertThat(owner).map(Identity::pid).contains(20L);
        assertThat(owner).map(Identity::start).contains("600");
        assertThat(counting.self + counting.lookup).isEqualTo(4);
        assertThat(counting.lookupProcess).isZero();
    }
}
