package dev.proclive;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Precedence row 2's second half: a host name is no proof of a machine. Two machines that share a
 * host name (two VMs from one image, two laptops called localhost, a state file on a shared disk)
 * differ in machine id, and a boot id that differs proves a reboot only on the same machine.
 */
class MachineRuleTest {

    static final long PID = 123;
    static final String START = "4567";
    static final String HERE = "0123456789abcdef0123456789abcdef";
    static final String THERE = "fedcba9876543210fedcba9876543210";

    final FakeIntrospector os = new FakeIntrospector().process(PID, 1, "owner", START);

    {
        os.machine = Optional.of(HERE);
    }

    final LivenessChecker checker = LivenessChecker.of(os);

    static Identity on(String machine, String boot) {
        return new Identity(PID, START, boot, FakeIntrospector.HOST, "owner", FakeIntrospector.PIDNS, machine);
    }

    private Verdict verdict(Identity id) {
        Verdict v = checker.explain(id);
        assertThat(checker.check(id)).isEqualTo(v.liveness());
        assertThat(checker.checkAll(List.of(id))).containsExactly(v);
        return v;
    }

    @Test
    void anotherMachineWithTheSameHostNameIsUnknownNeverRebooted() {
        Verdict v = verdict(on(THERE, "another-boot"));
        assertThat(v.reason()).isEqualTo(Reason.OTHER_HOST);
        assertThat(v.detail()).contains(THERE, HERE, "same host name");
        assertThat(verdict(on(THERE, FakeIntrospector.BOOT)).reason()).isEqualTo(Reason.OTHER_HOST);
        os.put(PID, new dev.proclive.spi.ProcessLookup.Gone("no such pid here"));
        assertThat(verdict(on(THERE, FakeIntrospector.BOOT)).reason()).as("not EXITED: it ran elsewhere")
                .isEqualTo(Reason.OTHER_HOST);
    }

    @Test
    void theSameMachineWithAnotherBootWasRebooted() {
        assertThat(verdict(on(HERE, "another-boot")).reason()).isEqualTo(Reason.REBOOTED);
        assertThat(verdict(on(HERE, FakeIntrospector.BOOT)).reason()).isEqualTo(Reason.MATCHED);
    }

    @Test
    void aMachineThatCannotBeReadNowIsUnknownForIdentitiesThatRecordOne() {
        os.machine = Optional.empty();
        LivenessChecker blind = LivenessChecker.of(os);
        Verdict v = blind.explain(on(HERE, "another-boot"));
        assertThat(v.reason()).isEqualTo(Reason.OTHER_HOST);
        assertThat(v.detail()).contains("machine's id cannot be read");
        assertThat(blind.check(on(HERE, FakeIntrospector.BOOT))).isEqualTo(Liveness.UNKNOWN);
    }

    @Test
    void anIdentityWithoutAMachineKeepsTheHostRule() {
        assertThat(verdict(on("", "another-boot")).reason()).isEqualTo(Reason.REBOOTED);
        assertThat(verdict(on("", FakeIntrospector.BOOT)).reason()).isEqualTo(Reason.MATCHED);
        os.machine = Optional.empty();
        assertThat(LivenessChecker.of(os).explain(on("", "another-boot")).reason()).isEqualTo(Reason.REBOOTED);
    }

    @Test
    void theHostRuleStillComesFirst() {
        Identity elsewhere = new Identity(PID, START, "b", "elsewhere", "owner", "", THERE);
        Verdict v = verdict(elsewhere);
        assertThat(v.reason()).isEqualTo(Reason.OTHER_HOST);
        assertThat(v.detail()).contains("recorded on host elsewhere");
    }

    @Test
    void anIdentityRecordsThisMachineAndOnlyAValidOne() {
        assertThat(checker.current()).get().extracting(Identity::machine).isEqualTo(HERE);
        assertThat(checker.identify(PID)).get().extracting(Identity::machine).isEqualTo(HERE);
        os.machine = Optional.empty();
        assertThat(LivenessChecker.of(os).identify(PID)).get().extracting(Identity::machine).isEqualTo("");
    }

    @Test
    void onAPlatformThatCannotIntrospectARecordedMachineIsUnsupported() {
        LivenessChecker none = LivenessChecker.of(new dev.proclive.platform.UnsupportedProcessIntrospector("Plan 9"));
        assertThat(none.explain(new Identity(PID, START, "", "", "", "", HERE)).reason())
                .isEqualTo(Reason.UNSUPPORTED_PLATFORM);
    }

    @Test
    void aDetailQuotesAShortPrefixOfEveryRecordedValue() {
        String huge = "x".repeat(1 << 20);
        List<Identity> corrupt = List.of(
                new Identity(PID, START, "", huge, "owner", "", ""),                       // host
                new Identity(PID, START, "", FakeIntrospector.HOST, "owner", "", huge),     // machine
                new Identity(PID, START, "", "", "owner", huge, ""),                       // pidns
                new Identity(PID, START, huge, "", "owner", "", ""),                       // boot
                new Identity(PID, huge, "", "", huge, "", ""),                             // start and name
                new Identity(PID, START, "", "", huge, "", ""),                            // name, matched
                new Identity(999, START, "", "", huge, "", ""));                           // name, gone
        for (Identity id : corrupt) {
            Verdict v = checker.explain(id);
            assertThat(v.detail().length()).as("%s: %s", v.reason(), v.detail().substring(0, 60)).isLessThan(600);
            assertThat(v.detail()).contains("xxxx", "characters)");
        }
    }

    @Test
    void shortValuesAreQuotedWhole() {
        assertThat(VerdictDetail.shown("x".repeat(VerdictDetail.SHOWN))).hasSize(VerdictDetail.SHOWN);
        assertThat(VerdictDetail.shown("x".repeat(VerdictDetail.SHOWN + 1)))
                .startsWith("x".repeat(VerdictDetail.SHOWN) + "…").endsWith("(81 characters)");
    }

    // JSON: "machine" is one more field, written last, left out when empty, strict as the others.

    final ObjectMapper json = new ObjectMapper();

    @Test
    void machineIsWrittenLastAndLeftOutWhenEmpty() throws Exception {
        assertThat(json.writeValueAsString(new Identity(7, "9", "b", "h", "n", "4", HERE)))
                .isEqualTo("{\"pid\":7,\"start\":\"9\",\"boot\":\"b\",\"host\":\"h\",\"name\":\"n\",\"pidns\":\"4\",\"machine\":\""
                        + HERE + "\"}");
        assertThat(json.writeValueAsString(new Identity(7, "9", "b", "h", "n", "4"))).doesNotContain("machine");
    }

    @Test
    void machineRoundTripsAndAGoIdentityReadsWithout() throws Exception {
        Identity id = new Identity(7, "9", "b", "h", "n", "4", HERE);
        assertThat(json.readValue(json.writeValueAsBytes(id), Identity.class)).isEqualTo(id);
        Identity go = json.readValue("{\"pid\":7,\"start\":\"9\",\"boot\":\"b\",\"host\":\"h\",\"name\":\"n\"}"
                .getBytes(StandardCharsets.UTF_8), Identity.class);
        assertThat(go.machine()).isEmpty();
        assertThat(json.readValue("{\"pid\":7,\"start\":\"9\",\"machine\":null}", Identity.class).machine()).isEmpty();
    }

    @Test
    void machineIsAJsonStringOrNullStrictly() {
        for (String value : List.of("1", "true", "{}", "[]", "1.5")) {
            String text = "{\"pid\":7,\"start\":\"9\",\"machine\":" + value + "}";
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> json.readValue(text, Identity.class))
                    .as(text).isInstanceOf(MismatchedInputException.class);
        }
    }
}
