package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;

import dev.proclive.Children;
import dev.proclive.Identity;
import dev.proclive.ProcLive;
import dev.proclive.etcd.Etcd;
import dev.proclive.etcd.EtcdGateway;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd restored from an older copy of its data (the same cluster, its revisions back) while a
 * holder keeps its grant: a store opened after the restore (a newcomer's fresh process) has no
 * revision to compare with, so it must not be the only guard. No newcomer is granted while the
 * holder has not been told its grant is lost.
 */
@EnabledOnOs(OS.LINUX)
class EtcdRestoredFromACopyIT {

    @TempDir
    Path dir;

    @RegisterExtension
    final Children children = new Children();

    /** A store as a process of this user opens it: with this user's revision marks (here, the test's own). */
    private LeaseStore store(EtcdCluster etcd) throws IOException {
        return store(etcd, Duration.ofSeconds(30));
    }

    private LeaseStore store(EtcdCluster etcd, Duration ttl) throws IOException {
        return LeaseStore.builder().etcd(etcd.endpoints()).prefix("restored/").revisionMarks(dir.resolve("state"))
                .policy(LeasePolicy.builder().ttl(ttl).build()).build();
    }

    /** A TTL whose keep-alive period (a third of it) is far longer than a holder may go on after a restore. */
    private static final Duration LONG_TTL = Duration.ofSeconds(90);

    /** How soon after etcd answers again a holder is told its grant is lost, on a quiet machine. */
    private static final Duration TOLD_WITHIN = Duration.ofSeconds(3);

    /** Kills the member, puts the older copy of its data in place of its own, and starts it again. */
    private static void restore(EtcdCluster etcd, Path older) throws Exception {
        etcd.restoreData(etcd.members.get(0), older);
    }

    /** Takes a copy of the member's data (killed for it, then started again). */
    private Path copyOf(EtcdCluster etcd) throws Exception {
        return etcd.copyData(etcd.members.get(0), dir.resolve("older-copy"));
    }

    private static void moveRevisionOn(EtcdCluster etcd, int writes) throws IOException {
        try (Etcd raw = EtcdGateway.open(etcd.endpoints(), Optional.empty(), Duration.ofSeconds(5),
                dev.proclive.text.StrictJson.mapper())) {
            for (int i = 0; i < writes; i++) {
                raw.txn(List.of(), List.of(new Etcd.Put("elsewhere/" + i, "x".getBytes(StandardCharsets.UTF_8), 0)));
            }
        }
    }

    @Test
    void aStoreOpenedAfterARestoreIsNotGrantedWhileTheHolderIsKept() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(dir, 1)) {
            EtcdCluster.Member m = etcd.members.get(0);
            moveRevisionOn(etcd, 3);
            Path older = etcd.copyData(m, dir.resolve("older-copy"));
            moveRevisionOn(etcd, 10);

            Identity me = ProcLive.current().orElseThrow();
            try (LeaseStore holders = store(etcd)) {
                Lease held = ((Acquisition.Granted) holders.acquire("build", me)).lease();

                etcd.restoreData(m, older); // restored from the older copy: same cluster, revisions back

                try (LeaseStore newcomers = store(etcd)) { // a newcomer's process, started after the restore
                    Acquisition second;
                    try {
                        second = newcomers.acquire("build", children.sleeping());
                    } catch (IOException refused) {
                        assertThat(refused).hasMessageContaining("etcd's revision went back from")
                                .hasMessageContaining("--bump-revision").hasMessageContaining("delete that file");
                        return;
                    }
                    if (second instanceof Acquisition.Granted granted) {
                        assertThat(held.lost()).as("fence %d granted to a newcomer while the holder of fence %d was not told"
                                + " its grant is lost", granted.lease().fence(), held.fence()).isDone();
                    }
                }
            }
        }
    }

    @Test
    void aHolderWhoseEtcdLeaseIsNotInTheCopyIsToldSoonAfterTheRestore() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(dir, 1)) {
            moveRevisionOn(etcd, 3);
            Path older = copyOf(etcd);
            moveRevisionOn(etcd, 10);
            try (LeaseStore holders = store(etcd, LONG_TTL)) {
                Lease held = ((Acquisition.Granted) holders.acquire("build", ProcLive.current().orElseThrow())).lease();
                restore(etcd, older);
                dev.proclive.Eventually.until("the holder of fence " + held.fence() + " told its grant is lost after the restore"
                        + " (its next keep-alive round is " + LONG_TTL.toSeconds() / 3 + " s after the last)", TOLD_WITHIN,
                        () -> held.lost().isDone());
            }
        }
    }

    @Test
    void aHolderWhoseEtcdLeaseIsInTheCopyIsToldSoonAfterTheRestore() throws Exception {
        try (EtcdCluster etcd = EtcdCluster.start(dir, 1)) {
            moveRevisionOn(etcd, 3);
            Identity me = ProcLive.current().orElseThrow();
            try (LeaseStore holders = store(etcd, LONG_TTL)) {
                Lease early = ((Acquisition.Granted) holders.acquire("early", me)).lease(); // on this JVM's etcd lease
                Path older = copyOf(etcd); // the etcd lease is in the copy
                moveRevisionOn(etcd, 10);
                Lease held = ((Acquisition.Granted) holders.acquire("build", me)).lease(); // on the same etcd lease
                restore(etcd, older); // the etcd lease lives on, the record of build is gone, revisions back
                dev.proclive.Eventually.until("the holder of fence " + held.fence() + " told its grant is lost after the restore,"
                        + " though its etcd lease is still there", TOLD_WITHIN, () -> held.lost().isDone());
                assertThat(early.fence()).isLessThan(held.fence());
                assertThat(held.lost().join().detail()).as("told why").contains("revision went back");
            }
        }
    }
}
