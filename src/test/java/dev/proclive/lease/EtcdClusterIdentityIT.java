package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.etcd.Etcd;
import dev.proclive.etcd.EtcdGateway;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store hands out fences of one etcd cluster only, and only while its revisions go forward:
 * against real members, two clusters behind one endpoint list (a migration, a moved name) and a
 * member whose data was wiped and that came back on the same address (a restore from nothing).
 */
@EnabledOnOs(OS.LINUX)
class EtcdClusterIdentityIT {

    @TempDir
    Path dir;

    private static LeaseStore store(List<URI> endpoints) throws IOException {
        return LeaseStore.builder().etcd(endpoints).prefix("identity/")
                .policy(LeasePolicy.builder().ttl(Duration.ofSeconds(30)).build()).build();
    }

    private static Etcd raw(List<URI> endpoints) throws IOException {
        return EtcdGateway.open(endpoints, Optional.empty(), Duration.ofSeconds(5), dev.proclive.text.StrictJson.mapper());
    }

    @Test
    void aNewcomerWhoseFirstMemberRefusesIsNeverGrantedOnAnotherCluster() throws Exception {
        try (EtcdCluster a = EtcdCluster.start(Files.createDirectories(dir.resolve("a")), 1);
             EtcdCluster b = EtcdCluster.start(Files.createDirectories(dir.resolve("b")), 1)) {
            List<URI> both = List.of(a.endpoints().get(0), b.endpoints().get(0));
            Identity me = ProcLive.current().orElseThrow();
            try (LeaseStore holders = store(List.of(a.endpoints().get(0))); LeaseStore newcomers = store(both)) {
                Lease held = ((Acquisition.Granted) holders.acquire("build", me)).lease();
                assertThat(newcomers.read("build")).as("the newcomer reaches cluster a first, and sees the grant")
                        .map(LeaseRecord::fence).contains(held.fence());
                a.members.get(0).kill(); // its first member refuses now
                assertThatThrownBy(() -> newcomers.acquire("build", me)).isInstanceOf(IOException.class)
                        .hasMessageContaining("no etcd member answered").hasMessageContaining("not of cluster");
            }
            try (Etcd other = raw(b.endpoints())) {
                assertThat(other.list("identity/")).as("nothing was written on the other cluster").isEmpty();
            }
        }
    }

    @Test
    void aStoreRefusesToGrantOnceEtcdsRevisionWentBack() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(dir, 1)) {
            Identity me = ProcLive.current().orElseThrow();
            try (LeaseStore store = store(etcd.endpoints())) {
                try (Etcd raw = raw(etcd.endpoints())) {
                    for (int i = 0; i < 10; i++) { // other keys move the revision on, as a busy cluster's do
                        raw.txn(List.of(), List.of(new Etcd.Put("elsewhere/" + i, "x".getBytes(StandardCharsets.UTF_8), 0)));
                    }
                }
                Lease held = ((Acquisition.Granted) store.acquire("build", me)).lease();
                EtcdCluster.Member m = etcd.members.get(0);
                m.kill();
                try (Stream<Path> files = Files.walk(m.data)) {
                    for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(p);
                    }
                }
                m.start(); // the same member on the same address, with nothing: revisions start again
                etcd.awaitLeader(Duration.ofSeconds(30));
                assertThatThrownBy(() -> store.acquire("deploy", me)).isInstanceOf(IOException.class)
                        .hasMessageContaining("etcd's revision went back from")
                        .hasMessageContaining("--bump-revision");
                assertThatThrownBy(() -> store.acquire("build", me)).isInstanceOf(IOException.class)
                        .hasMessageContaining("went back");
                try (Etcd raw = raw(etcd.endpoints())) {
                    assertThat(raw.list("identity/")).as("nothing granted on the wiped member").isEmpty();
                }
                assertThat(held.fence()).isGreaterThan(10);
            }
        }
    }
}
