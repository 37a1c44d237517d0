package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** Wait statuses decoded as {@code waitpid(2)}'s macros read them, on every OS. */
class ExitStatusTest {

    @Test
    void aWaitStatusIsAnExitCodeOrASignalWithItsCore() {
        assertThat(ExitStatus.ofWaitStatus(0)).hasValue(ExitStatus.exited(0));
        assertThat(ExitStatus.ofWaitStatus(3 << 8)).hasValue(ExitStatus.exited(3));
        assertThat(ExitStatus.ofWaitStatus(255 << 8)).hasValue(ExitStatus.exited(255));
        assertThat(ExitStatus.ofWaitStatus(9)).hasValue(ExitStatus.killed(9, false));
        assertThat(ExitStatus.ofWaitStatus(11 | 0x80)).hasValue(ExitStatus.killed(11, true));
        assertThat(ExitStatus.ofWaitStatus(0x137f)).as("stopped by SIGSTOP: no end").isEmpty();
        assertThat(ExitStatus.ofWaitStatus(0xffff)).as("continued: no end").isEmpty();
        assertThat(ExitStatus.ofWaitStatus(-1)).as("no status at all").isEmpty();
    }

    @Test
    void itReadsAsAPersonWouldSayIt() {
        assertThat(ExitStatus.exited(3)).hasToString("exited with status 3");
        assertThat(ExitStatus.killed(9, false)).hasToString("killed by SIGKILL");
        assertThat(ExitStatus.killed(11, true)).hasToString("killed by SIGSEGV (core dumped)");
        assertThat(ExitStatus.killed(64, false)).hasToString("killed by signal 64");
        assertThat(ExitStatus.killed(15, false).signalName()).hasValue("SIGTERM");
        assertThat(ExitStatus.exited(0).signalName()).isEmpty();
        assertThat(Verdict.of(Reason.EXITED, "pid 42 is gone").withExit(ExitStatus.killed(9, false)))
                .hasToString("dead (exited): pid 42 is gone; killed by SIGKILL");
    }

    @Test
    void exactlyOneOfCodeAndSignal() {
        assertThatThrownBy(() -> new ExitStatus(OptionalInt.of(1), OptionalInt.of(9), false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ExitStatus(OptionalInt.empty(), OptionalInt.empty(), false))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ExitStatus.exited(256)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ExitStatus.killed(0, false)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ExitStatus(OptionalInt.of(0), OptionalInt.empty(), true))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(new Verdict(Reason.EXITED, "x").exit()).isEmpty();
    }
}
