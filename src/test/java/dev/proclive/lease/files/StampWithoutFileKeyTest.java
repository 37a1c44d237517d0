package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.lease.book.LeaseJson;
import dev.proclive.lease.book.Records;
import dev.proclive.spi.internal.FileLocker;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file system whose files have no identity (fileKey() null, as on Windows; here a zip file
 * system): a record's stamp is empty, never a failure. The grant's own write takes its stamp
 * through the same method.
 */
class StampWithoutFileKeyTest {

    @Test
    void aRecordWithoutAFileKeyHasNoStamp(@TempDir Path tmp) throws Exception {
        Identity self = ProcLive.current().orElseThrow();
        FileLocker noLock = (file, most) -> () -> { }; // never asked: nothing here is locked
        try (FileSystem zip = FileSystems.newFileSystem(tmp.resolve("leases.zip"), Map.of("create", "true"))) {
            LeaseFiles files = LeaseFiles.open(zip.getPath("/leases"), self, id -> false, false, noLock);
            assertThat(files.stamp("a")).isPresent(); // none there: the stamp of an absent record

            Path record = files.directory().resolve("a.lease");
            Files.writeString(record, LeaseJson.write(sample(self)) + "\n"); // zipfs takes no NOFOLLOW_LINKS: written here
            assumeTrue(Files.readAttributes(record, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey() == null,
                    "this file system names a file identity");

            assertThat(files.stamp("a")).isEmpty();
        }
    }

    private static LeaseRecord sample(Identity self) {
        return Records.granted("a", LeaseRecord.State.HELD, self, self, Instant.now(), Duration.ofSeconds(30),
                Optional.empty(), Optional.empty(), OptionalLong.empty(), Optional.empty());
    }
}
