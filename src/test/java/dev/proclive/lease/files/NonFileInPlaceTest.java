package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseStore;
import dev.proclive.platform.Platform;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whoever may write in a store's directory can put a directory or a Unix socket where the record
 * was, after the store found a regular file there and before it opens it. The record is then
 * corrupt, as it is when the check finds them ("a directory, or other non-regular file where a
 * lease file should be is refused"): never a plain I/O failure, which the CLI reports as exit 74.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class NonFileInPlaceTest {

    @TempDir
    Path dir;

    @RegisterExtension
    final Children children = new Children();

    private LeaseFiles storeWithRecord(SwapBeforeRead.Swap swap) throws IOException {
        Identity holder = children.sleeping();
        try (LeaseStore store = LeaseStore.open(dir)) {
            assertThat(store.acquire("build", holder)).isInstanceOf(Acquisition.Granted.class);
        }
        return LeaseFiles.open(dir, ProcLive.current().orElseThrow(), id -> false, false,
                new SwapBeforeRead(Platform.fileLocker(), swap));
    }

    @Test
    void aDirectoryPutInTheRecordsPlaceIsCorrupt() throws Exception {
        LeaseFiles files = storeWithRecord(file -> {
            Files.delete(file);
            Files.createDirectory(file);
        });

        assertThatThrownBy(() -> files.read("build")).isInstanceOf(LeaseCorruptException.class);
    }

    @Test
    void aSocketPutInTheRecordsPlaceIsCorrupt() throws Exception {
        ServerSocketChannel[] bound = new ServerSocketChannel[1];
        LeaseFiles files = storeWithRecord(file -> {
            Files.delete(file);
            bound[0] = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            bound[0].bind(UnixDomainSocketAddress.of(file));
        });
        try {
            assertThatThrownBy(() -> files.read("build")).isInstanceOf(LeaseCorruptException.class);
        } finally {
            if (bound[0] != null) {
                bound[0].close();
            }
        }
    }
}
