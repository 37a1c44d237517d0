package dev.proclive.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.spi.ProcessInfo;
import dev.proclive.spi.ProcessState;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class StatLineTest {

    /** Locates and decodes a whole line, as the introspector does; fails the test if it is malformed. */
    private static ProcessInfo decode(byte[] b, int len) {
        StatLine line = new StatLine();
        String problem = line.locate(b, len);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return line.info();
    }

    private static ProcessInfo parse(String fixture) {
        byte[] b = Fixtures.bytes("stat/" + fixture);
        return decode(b, b.length);
    }

    /** Whether the fixture's line is of a process that is ending. */
    private static boolean ending(String fixture) {
        byte[] b = Fixtures.bytes("stat/" + fixture);
        StatLine line = new StatLine();
        assertThat(line.locate(b, b.length)).isNull();
        return line.ending();
    }

    @Test
    void aKernelThreadIsToldByItsFlags() {
        byte[] b = Fixtures.bytes("stat/kernel-thread.stat");
        StatLine line = new StatLine();
        assertThat(line.locate(b, b.length)).isNull();
        assertThat(line.kernelThread()).isTrue();
        byte[] p = Fixtures.bytes("stat/plain.stat");
        assertThat(line.locate(p, p.length)).isNull();
        assertThat(line.kernelThread()).isFalse();
    }

    @Test
    void aZombieADeadProcessAndOneInDoExitAreEndingALiveOneIsNot() {
        assertThat(ending("plain.stat")).isFalse();
        assertThat(ending("spaces.stat")).isFalse();
        assertThat(ending("exiting.stat")).as("PF_EXITING in field 9").isTrue();
        assertThat(ending("zombie.stat")).isTrue();
        assertThat(ending("dead.stat")).isTrue();
    }

    @Test
    void plainLineGivesPidParentNameStartAndState() {
        assertThat(parse("plain.stat"))
                .isEqualTo(new ProcessInfo(2441, 2439, "cat", "48903", ProcessState.LIVE));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "spaces.stat              | my proc name | 1 | 4180",
            "parens.stat              | a) (b)       | 1 | 5000",
            "fake-fields-in-name.stat | ) R 1        | 4 | 7000",
    })
    void nameRunsFromFirstOpenToLastCloseParenthesis(String fixture, String name, long ppid, String start) {
        ProcessInfo info = parse(fixture);
        assertThat(info.name()).isEqualTo(name);
        assertThat(info.parentPid()).isEqualTo(ppid);
        assertThat(info.start()).isEqualTo(start);
    }

    @Test
    void zeroIsANumberLikeAnyOther() {
        assertThat(parse("init.stat")).isEqualTo(new ProcessInfo(1, 0, "systemd", "0", ProcessState.LIVE));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "7 (x) S  1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",   // two spaces after the state
            "7 (x)  S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",   // two spaces before it
            "7 (x) Ss 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",   // a state of two letters
            "7 (x)S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",     // no space after the name
            "7 (x) S -1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",   // a negative ppid
            "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -1 0 0",     // a negative starttime
            "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6x0 0 0",    // starttime not digits
            "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1234567890123456789 0 0", // 19 digits
            "7(x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",     // no space before the name
            "-7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",   // a negative pid
            "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0",            // cut before starttime
            ")7 (x S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0",    // ')' before '('
    })
    void malformedLinesAreRefused(String text) {
        byte[] b = (text + "\n").getBytes(StandardCharsets.ISO_8859_1);
        assertThat(new StatLine().locate(b, b.length)).as(text).isNotNull();
    }

    @Test
    void theLastFieldMayEndTheBufferWithoutANewline() {
        byte[] b = "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600".getBytes(StandardCharsets.ISO_8859_1);
        StatLine line = new StatLine();
        assertThat(line.locate(b, b.length)).isNull();
        assertThat(line.info()).isEqualTo(new ProcessInfo(7, 1, "x", "600", ProcessState.LIVE));
        assertThat(line.locate(b, b.length - 1)).as("only what len covers counts").isNull();
        assertThat(line.info().start()).isEqualTo("60");
    }

    @Test
    void nameMayHoldANewline() {
        ProcessInfo info = parse("newline.stat");
        assertThat(info.name()).isEqualTo("two\nlines");
        assertThat(info.start()).isEqualTo("6000");
    }

    @Test
    void kernelThreadNamesAreLongerThanFifteenBytes() {
        ProcessInfo info = parse("kernel-thread.stat");
        assertThat(info.name()).hasSize(62).startsWith("kworker/R-sync_wq");
        assertThat(info.parentPid()).isEqualTo(2);
        assertThat(info.start()).isEqualTo("18");
    }

    @Test
    void stateZIsZombieAndXIsDead() {
        assertThat(parse("zombie.stat").state()).isEqualTo(ProcessState.ZOMBIE);
        assertThat(parse("dead.stat").state()).isEqualTo(ProcessState.DEAD);
        assertThat(parse("fake-fields-in-name.stat").state()).isEqualTo(ProcessState.ZOMBIE);
    }

    @ParameterizedTest
    @ValueSource(chars = {'R', 'S', 'D', 'T', 't', 'W', 'P', 'I', 'K'})
    void everyOtherStateCanStillRun(char state) {
        assertThat(StatLine.state((byte) state)).isEqualTo(ProcessState.LIVE);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "truncated.stat  | field 22",
            "no-parens.stat  | no (comm)",
            "bad-ppid.stat   | ppid",
            "bad-start.stat  | starttime",
            "bad-pid.stat    | no pid",
            "empty.stat      | no (comm)",
    })
    void malformedLinesAreRefusedWithWhatIsWrong(String fixture, String problem) {
        assertThatThrownBy(() -> parse(fixture))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(problem);
        byte[] b = Fixtures.bytes("stat/" + fixture);
        assertThat(new StatLine().locate(b, b.length)).contains(problem);
    }

    private static StatLine located(String fixture) {
        byte[] b = Fixtures.bytes("stat/" + fixture);
        StatLine line = new StatLine();
        assertThat(line.locate(b, b.length)).isNull();
        return line;
    }

    @Test
    void aLineSaysWhatItsDecodeHoldsAndNothingElse() {
        StatLine line = located("parens.stat");
        ProcessInfo info = line.info();
        assertThat(line.says(info)).isTrue();
        assertThat(line.says(new ProcessInfo(info.pid() + 1, info.parentPid(), info.name(), info.start(), info.state()))).isFalse();
        assertThat(line.says(new ProcessInfo(info.pid(), info.parentPid() + 1, info.name(), info.start(), info.state()))).isFalse();
        assertThat(line.says(new ProcessInfo(info.pid(), info.parentPid(), info.name() + "x", info.start(), info.state()))).isFalse();
        assertThat(line.says(new ProcessInfo(info.pid(), info.parentPid(), info.name(), "5001", info.state()))).isFalse();
        assertThat(line.says(new ProcessInfo(info.pid(), info.parentPid(), info.name(), info.start(), ProcessState.ZOMBIE))).isFalse();
        byte[] b = "7 (caf\u00e9) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 600 0 0\n".getBytes(StandardCharsets.UTF_8);
        StatLine utf8 = new StatLine();
        assertThat(utf8.locate(b, b.length)).isNull();
        assertThat(utf8.says(utf8.info())).as("non-ASCII names are decoded again").isFalse();
    }

    @Test
    void startTicksReadsTheStartField() {
        assertThat(located("parens.stat").startTicks()).isEqualTo(5000);
    }

    @Test
    void aLocatedLineReadsInPlace() {
        StatLine line = located("fake-fields-in-name.stat");
        assertThat(line.pid()).isEqualTo(80);
        assertThat(line.stateByte()).isEqualTo((byte) 'Z');
        assertThat(line.info().name()).isEqualTo(") R 1");
    }

    @Test
    void aReusedLineForgetsWhatItLocatedBefore() {
        StatLine line = located("plain.stat");
        byte[] truncated = Fixtures.bytes("stat/truncated.stat");
        assertThat(line.locate(truncated, truncated.length)).contains("field 22");
        byte[] spaces = Fixtures.bytes("stat/spaces.stat");
        assertThat(line.locate(spaces, spaces.length)).isNull();
        assertThat(line.info().name()).isEqualTo("my proc name");
    }

    @Test
    void aLineReadIntoALargerBufferStopsAtItsLength() {
        byte[] line = Fixtures.bytes("stat/plain.stat");
        byte[] buffer = new byte[4096];
        System.arraycopy(line, 0, buffer, 0, line.length);
        buffer[line.length] = ')'; // stale bytes of an earlier, longer read
        assertThat(decode(buffer, line.length).name()).isEqualTo("cat");
    }

    @Test
    void nameBytesThatAreNotUtf8BecomeReplacementCharacters() {
        String line = "90 (a\u00ff) S 1 90 90 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0\n";
        byte[] b = line.getBytes(StandardCharsets.ISO_8859_1);
        assertThat(decode(b, b.length).name()).isEqualTo("a\uFFFD");
    }
}
