package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseStore;
import dev.proclive.platform.Platform;
import dev.proclive.spi.internal.FileLocker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A link renamed into a record's or guard's place after it was found is still said to be one. */
@EnabledOnOs({OS.LINUX, OS.MAC})
class LinkInPlaceRaceTest {

    @TempDir
    Path dir;

    @RegisterExtension
    final Children children = new Children();

    @Test
    void aLinkPutInPlaceAfterItWasFoundIsCorruptAsALink() throws Exception {
        Identity holder = children.sleeping();
        Identity self = ProcLive.current().orElseThrow();
        try (LeaseStore store = LeaseStore.open(dir)) {
            store.acquire("build", holder);
        }
        Path elsewhere = Files.writeString(dir.resolve("elsewhere"), "1");
        FileLocker linkFirst = new SwapBeforeRead(Platform.fileLocker(), file -> {
            Path link = Files.createSymbolicLink(file.resolveSibling("link"), elsewhere);
            Files.move(link, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        });
        LeaseFiles files = LeaseFiles.open(dir, self, id -> false, false, linkFirst);
        assertThatThrownBy(() -> files.read("build")).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("a symbolic link stands where build.lease");
        assertThatThrownBy(() -> files.highestFence("build")).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining("a symbolic link stands where build.guard");
        assertThat(SessionFiles.renewedAt(dir, "build", 1, java.time.Instant.now(), java.util.Optional.empty(), linkFirst)).isEmpty();
    }
}
