package dev.proclive.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Identity;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.Acquisition;
import dev.proclive.lease.LeaseRecord;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What an undecided lease tells its caller to do: only what could prove the holder's end from where it is. */
class ReportTest {

    static final Identity HOLDER = new Identity(100, "500", "b", "h", "holder", "ns");
    static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

    private static String said(Reason reason) {
        return said(reason, LeaseRecord.State.HELD);
    }

    private static String said(Reason reason, LeaseRecord.State state) {
        LeaseRecord held = new LeaseRecord("build", 3, state, HOLDER, HOLDER, NOW, NOW, Duration.ofSeconds(30),
                Optional.empty(), state == LeaseRecord.State.RESERVED ? Optional.of("a".repeat(64)) : Optional.empty(),
                java.util.OptionalLong.empty(), Optional.empty(), Optional.empty(), Optional.empty());
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = new Report(new PrintStream(new ByteArrayOutputStream()), new PrintStream(err, true, StandardCharsets.UTF_8))
                .acquisition(new Acquisition.Undecided(held, Verdict.of(reason, "why"), Optional.empty()), false, true);
        assertThat(code).isEqualTo(ExitCode.UNKNOWN.code());
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void anUndecidedLeaseSaysWhereItsHoldersEndCouldBeProven() {
        assertThat(said(Reason.ACCESS_DENIED)).contains("wait and try again (--wait), run this as the holder's user or"
                + " as root, or once you know the holder is gone: proclive lease break build");
        assertThat(said(Reason.OTHER_PID_NAMESPACE)).contains("run this in the holder's PID namespace, or once");
        assertThat(said(Reason.OTHER_HOST)).contains("run this on the holder's host, or once");
        assertThat(said(Reason.NO_FINGERPRINT)).contains("wait and try again (--wait), or once you know")
                .doesNotContain("run this");
        assertThat(said(Reason.EXITED, LeaseRecord.State.RESERVED)).contains("run this as the reserver's user or as"
                + " root if other users' processes cut the scan short, or once");
        assertThat(said(Reason.ACCESS_DENIED, LeaseRecord.State.RESERVED)).contains("as the reserver's user or as root,");
    }
}
