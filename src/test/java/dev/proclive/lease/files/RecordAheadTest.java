package dev.proclive.lease.files;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.platform.Platform;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record's {@code renewedAt} ahead of when its file last changed (its writer's clock a day ahead)
 * counts no later than a minute past that change: it held an UNKNOWN holder's lease off a day.
 */
class RecordAheadTest {

    @TempDir
    Path dir;

    @Test
    void aRecordRenewedAheadIsFreshNoLongerThanAMinuteAndItsTtlPastItsLastChange() throws Exception {
        Identity self = ProcLive.identify(ProcessHandle.current().pid()).orElseThrow();
        Identity elsewhere = new Identity(4242, "1", "another-boot", "another-host", "far", "");
        LeaseFiles files = LeaseFiles.open(dir, self, writer -> false, false, Platform.fileLocker());
        try {
            Instant written = Instant.now();
            Instant ahead = written.plus(Duration.ofDays(1));
            Duration ttl = Duration.ofSeconds(30);
            files.locked("build", guard -> guard.grant(new LeaseRecord("build", guard.fence() + 1,
                    LeaseRecord.State.HELD, elsewhere, elsewhere, ahead, ahead, ttl, Optional.empty())));
            Instant fresh = files.locked("build", guard -> guard.freshUntil(guard.record().orElseThrow()));
            assertThat(fresh).as("a minute and its TTL past the write, not a day")
                    .isBefore(written.plus(SessionFiles.SKEW).plus(ttl).plusSeconds(10))
                    .isAfter(written.plus(ttl));
        } finally {
            files.close();
        }
    }
}
