package dev.proclive.lease.book;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.proclive.Identity;
import dev.proclive.Reason;
import dev.proclive.Verdict;
import dev.proclive.lease.LeaseChange;
import dev.proclive.lease.LeaseCorruptException;
import dev.proclive.lease.LeaseRecord;
import dev.proclive.text.StrictJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * The record's streaming codec against the library's {@code ObjectMapper}: what it writes reads
 * back as the same record, its identities are what a caller's mapper makes of {@link Identity},
 * and it refuses what the mapper refuses (a field given twice, anything after the object).
 */
class LeaseJsonTest {

    private static final Identity HOLDER = new Identity(4242, "1113342", "b7d446af-8d09-434d-b87e-89b4a654bbb7", "vm", "sh",
            "4026531836", "3d1219c7c4c5404aaa1f6d2a48adfda4");
    private static final Identity WRITER = new Identity(4200, "1113290", "", "vm", "", "", "");
    private static final Instant AT = Instant.parse("2026-12-02T16:52:22.939Z");

    /** A record with every field a record can hold. */
    private static LeaseRecord everything() {
        return new LeaseRecord("build", 7, LeaseRecord.State.RELEASED, HOLDER, WRITER, AT, AT.plusMillis(344),
                Duration.ofSeconds(30),
                Optional.of(new LeaseRecord.Takeover(6, WRITER, Verdict.of(Reason.EXITED, "pid 4200 is gone"), AT.minusSeconds(1),
                        Optional.of(AT.minusSeconds(2)))),
                Optional.of(Records.digest("0123456789abcdef0123456789abcdef")), OptionalLong.of(1000), Optional.of("cgroup"),
                Optional.of("1113309"),
                Optional.of(new LeaseRecord.Ending(LeaseChange.EXITED, AT.plusSeconds(1),
                        Verdict.of(Reason.EXITED, "pid 4242 (sh) is gone \"quoted\" \u00e9"), OptionalLong.of(3))),
                Optional.of("/sys/fs/cgroup/proclive.build.51f3a3eac8bd"), Optional.of("4026531835:29019"));
    }

    @Test
    void whatItWritesReadsBackAsTheSameRecord() throws Exception {
        LeaseRecord r = everything();
        String json = LeaseJson.write(r);
        assertThat(json).doesNotContain("\n");
        assertThat(LeaseJson.read("build", json.getBytes(StandardCharsets.UTF_8))).isEqualTo(r);
        LeaseRecord bare = new LeaseRecord("build", 1, LeaseRecord.State.HELD, HOLDER, HOLDER, AT, AT, Duration.ofSeconds(5),
                Optional.empty());
        assertThat(LeaseJson.read("build", LeaseJson.write(bare).getBytes(StandardCharsets.UTF_8))).isEqualTo(bare);
    }

    /** The cgroup a spawn makes for the longest name a lease may have, its store's tag in it, reads back. */
    @Test
    void theCgroupOfALeaseWithTheLongestNameReadsBack() throws Exception {
        String name = "n".repeat(128);
        String store = LeaseNames.storeTag(java.util.Map.of("PROCLIVE_LEASE_DIR", "/var/leases"));
        String cgroup = "/sys/fs/cgroup/user.slice/proclive." + name + "." + store + ".51f3a3eac8bd";
        assertThat(LeaseNames.ofCgroup(cgroup, store)).contains(name);
        LeaseRecord r = new LeaseRecord(name, 7, LeaseRecord.State.RESERVED, HOLDER, HOLDER, AT, AT, Duration.ofSeconds(30),
                Optional.empty(), Optional.of(Records.digest("0123456789abcdef0123456789abcdef")), OptionalLong.of(1000),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(cgroup), Optional.of("4026531835:29019"));
        assertThat(LeaseJson.read(name, LeaseJson.write(r).getBytes(StandardCharsets.UTF_8))).isEqualTo(r);
    }

    /** Only {@code proclive.NAME.STORE.HEX} of this store names a lease: another store's, or another shape, none. */
    @Test
    void aCgroupNamesALeaseOnlyInThisStoresShape() {
        String store = LeaseNames.storeTag(java.util.Map.of("PROCLIVE_LEASE_DIR", "/var/leases"));
        assertThat(store).isNotEqualTo(LeaseNames.storeTag(java.util.Map.of("PROCLIVE_LEASE_DIR", "/var/other")))
                .isNotEqualTo(LeaseNames.storeTag(java.util.Map.of("PROCLIVE_LEASE_DIR", "/var/leases", "X", "1")));
        assertThat(LeaseNames.ofCgroup("/sys/fs/cgroup/proclive.build." + store + ".51f3a3eac8bd", store))
                .contains("build");
        assertThat(LeaseNames.ofCgroup("/sys/fs/cgroup/proclive.a.b." + store + ".51f3a3eac8bd", store))
                .as("a name with a dot").contains("a.b");
        for (String other : new String[] {"/sys/fs/cgroup/proclive.build.0badc0de.51f3a3eac8bd",
            "/sys/fs/cgroup/proclive." + store + ".51f3a3eac8bd", "/sys/fs/cgroup/other.build." + store + ".51f3a3eac8bd",
            "/sys/fs/cgroup/proclive.build." + store, "/sys/fs/cgroup/proclive.build." + store + ".51f3." + "x",
            "/sys/fs/cgroup/proclive.-x." + store + ".51f3a3eac8bd", "/", "proclive"}) {
            assertThat(LeaseNames.ofCgroup(other, store)).as(other).isEmpty();
        }
    }

    @Test
    void aCgroupIsNamedByItsPathAndItsIdOnlyBesideIt() throws Exception {
        LeaseRecord r = everything();
        assertThat(Cgroup.of(r)).contains(new Cgroup("/sys/fs/cgroup/proclive.build.51f3a3eac8bd", "4026531835:29019"));
        String older = LeaseJson.write(r).replace(",\"cgroupId\":\"4026531835:29019\"", "");
        LeaseRecord read = LeaseJson.read("build", older.getBytes(StandardCharsets.UTF_8));
        assertThat(read.cgroup()).contains("/sys/fs/cgroup/proclive.build.51f3a3eac8bd");
        assertThat(read.cgroupId()).as("written before it was kept").isEmpty();
        assertThat(Cgroup.of(read)).contains(new Cgroup("/sys/fs/cgroup/proclive.build.51f3a3eac8bd", ""));
        assertThatThrownBy(() -> new LeaseRecord("build", 7, LeaseRecord.State.HELD, HOLDER, HOLDER, AT, AT,
                Duration.ofSeconds(30), Optional.empty(), Optional.empty(), OptionalLong.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.of("4026531835:29019")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void itsIdentitiesAreWhatACallersMapperMakesOfThem() throws Exception {
        JsonNode written = StrictJson.mapper().readTree(LeaseJson.write(everything()));
        // the same text: fields, order, and the empty ones left out
        assertThat(written.get("holder").toString()).isEqualTo(StrictJson.mapper().writeValueAsString(HOLDER));
        assertThat(written.get("writer").toString()).isEqualTo(StrictJson.mapper().writeValueAsString(WRITER));
        assertThat(written.get("previous").get("holder").toString()).isEqualTo(StrictJson.mapper().writeValueAsString(WRITER));
        assertThat(written.get("ended").get("exitCode").asLong()).isEqualTo(3);
        assertThat(written.get("ended").get("detail").asText()).isEqualTo("pid 4242 (sh) is gone \"quoted\" \u00e9");
        String shown = LeaseJson.write(everything(), Optional.of(Verdict.of(Reason.EXITED, "")), Optional.of(AT));
        JsonNode withVerdict = StrictJson.mapper().readTree(shown);
        assertThat(withVerdict.get("verdict").get("reason").asText()).isEqualTo("exited");
        assertThat(withVerdict.get("eligibleAt").asText()).isEqualTo("2026-12-02T16:52:22.939Z");
    }

    @Test
    void aFieldGivenTwiceOrAnythingAfterTheObjectIsCorrupt() {
        String json = LeaseJson.write(everything());
        for (String bad : new String[] {json.replace("\"fence\":7,", "\"fence\":7,\"fence\":8,"),
            json.replace("\"pid\":4242,", "\"pid\":4242,\"pid\":1,"), json + " {}", json + "]"}) {
            assertThatThrownBy(() -> LeaseJson.read("build", bad.getBytes(StandardCharsets.UTF_8)))
                    .as(bad).isInstanceOf(LeaseCorruptException.class);
        }
        assertThatThrownBy(() -> LeaseJson.read("build", json.replace("\"pid\":4242", "\"pid\":\"4242\"")
                .getBytes(StandardCharsets.UTF_8))).hasMessageContaining("\"holder\" is not an identity")
                .hasMessageContaining("must be a whole number");
        assertThatThrownBy(() -> LeaseJson.read("build", json.replace("\"pid\":4242", "\"pid\":18446744073709551616")
                .getBytes(StandardCharsets.UTF_8))).hasMessageContaining("does not fit in 64 bits");
    }

    /**
     * Each thing a record must say, said wrong and nothing else changed: corrupt, with what is wrong named. A reader
     * that guessed instead (a holder, a fence, an end) could admit a second writer.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
        "name                | \"other\"                             | names lease \"other\"",
        "fence               | -1                                  | \"fence\" is missing or not a whole number of at least 0",
        "fence               | \"7\"                                 | \"fence\" is missing or not a whole number",
        "fence               | 7.5                                 | \"fence\" is missing or not a whole number",
        "ttlMillis           | 0                                   | \"ttlMillis\" is missing or not a whole number of at least 1",
        "state               | \"taken\"                             | \"state\" is \"taken\", not held",
        "state               | 3                                   | \"state\" is missing or not a string",
        "holder              | \"me\"                                | \"holder\" is missing or not an identity",
        "holder.pid          | 0                                   | \"holder\" names no pid",
        "writer              | null                                | \"writer\" is missing or not an identity",
        "acquiredAt          | \"yesterday\"                         | \"acquiredAt\" is not an ISO-8601 instant",
        "renewedAt           | \"+10000-01-01T00:00:00Z\"            | outside the years 0000 to 9999",
        "previous            | \"x\"                                 | \"previous\" is not an object",
        "previous.fence      | -2                                  | \"fence\" is missing or not a whole number",
        "previous.reason     | \"tired\"                             | \"reason\" \"tired\" is no reason proclive gives",
        "previous.liveness   | \"alive\"                             | \"previous\" says \"alive\" for reason exited",
        "previous.renewedAt  | \"2026-12-02T16:52:22.000Z\"          | \"previous.renewedAt\" is after \"previous.at\"",
        "previous.at         | 5                                   | \"at\" is missing or not a string",
        "tokenDigest         | \"ABC\"                               | \"tokenDigest\" is \"ABC\", not 64 lowercase hex digits",
        "token               | \"ffffffffffffffffffffffffffffffff\"  | \"token\" and \"tokenDigest\" disagree",
        "token               | \"0123\"                              | \"token\" is \"0123\", not 32 lowercase hex digits",
        "reserverUid         | -1                                  | \"reserverUid\" is -1, not a user id",
        "reserverUid         | 4294967295                          | \"reserverUid\" is 4294967295, not a user id",
        "reserverUid         | \"1000\"                              | \"reserverUid\" is not a whole number",
        "adoptedBy           | 5                                   | \"adoptedBy\" is not a string",
        "startedAfter        | \"12a\"                               | \"startedAfter\" is \"12a\", not a start time",
        "cgroup              | \"relative/proclive.build.51f3a3eac8bd\" | \"cgroup\" is \"relative/proclive.build.51f3a3eac8bd\", not the absolute path",
        "cgroup              | \"/sys/fs/cgroup/../proclive.build.51f3a3eac8bd\" | not the absolute path of a cgroup",
        "cgroupId            | \"4026531835\"                        | \"cgroupId\" is \"4026531835\", not NAMESPACE:INODE",
        "ended               | []                                  | \"ended\" is not an object",
        "ended.how           | \"taken_over\"                        | \"ended.how\" is \"taken_over\", not released",
        "ended.at            | \"2026-12-02T16:52:21.000Z\"          | \"ended.at\" is before \"acquiredAt\"",
        "ended.exitCode      | 1.5                                 | \"exitCode\" is not a whole number",
        "ended.how           | \"released\"                          | \"ended.exitCode\" is given for a grant that ended as released",
    })
    void aRecordThatSaysOneThingWrongIsCorruptAndSaysWhat(String field, String value, String says) throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode o =
                (com.fasterxml.jackson.databind.node.ObjectNode) StrictJson.mapper().readTree(LeaseJson.write(everything()));
        com.fasterxml.jackson.databind.node.ObjectNode in = o;
        String[] path = field.split("\\.");
        for (int i = 0; i < path.length - 1; i++) {
            in = (com.fasterxml.jackson.databind.node.ObjectNode) in.get(path[i]);
        }
        in.set(path[path.length - 1], StrictJson.mapper().readTree(value));
        byte[] bad = o.toString().getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> LeaseJson.read("build", bad)).isInstanceOf(LeaseCorruptException.class)
                .hasMessageContaining(says);
    }

    /** Beside what a record must say: what it may leave out, an older record's {@code token}, and the shapes it is not. */
    @Test
    void whatARecordMayLeaveOutOrSayAsAnOlderOneDid() throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode o =
                (com.fasterxml.jackson.databind.node.ObjectNode) StrictJson.mapper().readTree(LeaseJson.write(everything()));
        o.put("token", "0123456789abcdef0123456789abcdef");
        assertThat(LeaseJson.read("build", o.toString().getBytes(StandardCharsets.UTF_8))).as("the token and its digest")
                .isEqualTo(everything());
        o.remove("tokenDigest");
        assertThat(LeaseJson.read("build", o.toString().getBytes(StandardCharsets.UTF_8)).tokenDigest()).as("an older"
                + " record's token, read as its digest").isEqualTo(everything().tokenDigest());
        o.remove("token");
        o.putNull("adoptedBy");
        o.putNull("previous");
        ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("ended")).putNull("exitCode");
        LeaseRecord read = LeaseJson.read("build", o.toString().getBytes(StandardCharsets.UTF_8));
        assertThat(read.tokenDigest()).isEmpty();
        assertThat(read.adoptedBy()).isEmpty();
        assertThat(read.previous()).isEmpty();
        assertThat(read.ended().orElseThrow().exitCode()).isEmpty();
        o.put("state", "reserved");
        assertThatThrownBy(() -> LeaseJson.read("build", o.toString().getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("the record is reserved but carries no token digest");
        o.put("state", "released");
        o.remove("cgroup");
        assertThatThrownBy(() -> LeaseJson.read("build", o.toString().getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("\"cgroupId\" is \"4026531835:29019\" without a \"cgroup\"");
        for (String notAnObject : new String[] {"[]", "7", "null", "{\"name\":"}) {
            assertThatThrownBy(() -> LeaseJson.read("build", notAnObject.getBytes(StandardCharsets.UTF_8)))
                    .as(notAnObject).isInstanceOf(LeaseCorruptException.class).hasMessageContaining("the record is not");
        }
        assertThatThrownBy(() -> LeaseJson.read("build", "{\n\"name\":".getBytes(StandardCharsets.UTF_8)))
                .as("a parser's message stays one line").hasMessageNotContaining("\n");
        assertThat(Records.isToken("0123456789abcdef0123456789abcdef")).isTrue();
        for (String notAToken : new String[] {null, "", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef"}) {
            assertThat(Records.isToken(notAToken)).as(String.valueOf(notAToken)).isFalse();
        }
    }

    @Test
    void aWaiterLineReadsBackAndAWaiterThatIsNoneIsRefused() throws Exception {
        LeaseBook.Waiter w = new LeaseBook.Waiter(HOLDER, AT);
        String line = LeaseJson.waiter(w);
        assertThat(LeaseJson.waiter(line)).isEqualTo(w);
        for (String bad : new String[] {"{}", "[]", "", line + "x", line.replace("\"pid\":4242,", "\"pid\":4242,\"pid\":1,")}) {
            assertThatThrownBy(() -> LeaseJson.waiter(bad)).as(bad).isInstanceOf(IOException.class);
        }
    }

    @Test
    void aWaiterLineNamesTheProcessThatWaitsWhenItIsNotTheHolderItAsksFor() throws Exception {
        dev.proclive.Identity cli = new dev.proclive.Identity(4243, HOLDER.start(), HOLDER.boot(), HOLDER.host(), "java",
                HOLDER.pidns());
        LeaseBook.Waiter w = new LeaseBook.Waiter(HOLDER, cli, AT);
        String line = LeaseJson.waiter(w);
        assertThat(line).contains("\"by\":{\"pid\":4243");
        assertThat(LeaseJson.waiter(line)).isEqualTo(w);
        assertThat(LeaseJson.waiter(LeaseJson.waiter(new LeaseBook.Waiter(HOLDER, AT)))).as("an older line: its own waiter")
                .isEqualTo(new LeaseBook.Waiter(HOLDER, HOLDER, AT));
        assertThatThrownBy(() -> LeaseJson.waiter(line.replace("\"by\":{", "\"by\":[{").replace("}}", "}]}")))
                .isInstanceOf(IOException.class);
    }
}
