package dev.proclive.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The highest revision seen of each etcd cluster, kept on disk: a client opened after etcd went
 * back (restored from an older copy) refuses the first answer below what an earlier client saw;
 * another cluster is never compared; a state directory that cannot be used changes nothing.
 * Against a small HTTP server answering as etcd's gateway does, at the revision and cluster the
 * test sets.
 */
@EnabledOnOs({OS.LINUX, OS.MAC})
class RevisionMarksTest {

    @TempDir
    Path dir;

    final List<HttpServer> servers = new ArrayList<>();
    final AtomicLong revision = new AtomicLong(50);
    final AtomicReference<String> cluster = new AtomicReference<>("7");

    @AfterEach
    void stop() {
        servers.forEach(s -> s.stop(0));
    }

    /** A member that answers every transaction at {@link #revision} of {@link #cluster}. */
    private URI member() throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        s.createContext("/", x -> {
            x.getRequestBody().readAllBytes();
            byte[] reply = ("{\"header\":{\"cluster_id\":\"" + cluster.get() + "\",\"revision\":\"" + revision.get()
                    + "\"},\"succeeded\":true}").getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, reply.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(reply);
            }
        });
        s.start();
        servers.add(s);
        return URI.create("http://127.0.0.1:" + s.getAddress().getPort());
    }

    /** A client as a fresh process opens one, keeping its marks in {@code state}. */
    private static EtcdGateway client(URI member, RevisionMarks state) throws IOException {
        return EtcdGateway.open(List.of(member), Optional.empty(), Optional.empty(), Duration.ofSeconds(2),
                dev.proclive.text.StrictJson.mapper(), state);
    }

    private static void write(EtcdGateway etcd) throws IOException {
        etcd.txn(List.of(), List.of(new Etcd.Put("k", new byte[0], 0)));
    }

    /** A client that saw revision 50 of cluster 7, and closed (as a CLI's process does when it ends). */
    private void seenBefore(URI member, Path state) throws IOException {
        try (EtcdGateway before = client(member, RevisionMarks.in(state))) {
            write(before);
        }
    }

    @Test
    void aClientOpenedAfterTheRevisionWentBackRefusesItsFirstAnswerBelowTheMark() throws Exception {
        URI member = member();
        Path state = dir.resolve("state");
        seenBefore(member, state);
        assertThat(state.resolve("etcd-7")).hasContent("50");

        revision.set(20); // restored from an older copy: same cluster, revisions back
        try (EtcdGateway after = client(member, RevisionMarks.in(state))) {
            assertThatThrownBy(() -> write(after)).isInstanceOf(IOException.class)
                    .hasMessageContaining("etcd's revision went back from 50 to 20")
                    .hasMessageContaining("--bump-revision")
                    .hasMessageContaining(state.resolve("etcd-7").toString()).hasMessageContaining("delete that file");
            revision.set(51); // brought past the mark (a restore with --bump-revision): answered again
            write(after);
        }
        assertThat(state.resolve("etcd-7")).hasContent("51");
    }

    @Test
    void aClientWithoutMarksIsGrantedBelowThem() throws Exception {
        URI member = member();
        Path state = dir.resolve("state");
        seenBefore(member, state);
        revision.set(20);
        try (EtcdGateway after = client(member, RevisionMarks.none())) {
            write(after); // what the marks are for: without them, nothing tells
        }
        assertThat(state.resolve("etcd-7")).as("never lowered").hasContent("50");
    }

    @Test
    void anotherClusterIsNotComparedWithTheMark() throws Exception {
        URI member = member();
        Path state = dir.resolve("state");
        seenBefore(member, state);
        cluster.set("8");
        revision.set(20);
        try (EtcdGateway other = client(member, RevisionMarks.in(state))) {
            write(other);
        }
        assertThat(state.resolve("etcd-7")).hasContent("50");
        assertThat(state.resolve("etcd-8")).hasContent("20");
    }

    @Test
    void aMarkIsNeverLoweredByAClientThatSawLess() throws Exception {
        Path state = dir.resolve("state");
        RevisionMarks ahead = RevisionMarks.in(state);
        RevisionMarks behind = RevisionMarks.in(state);
        ahead.saw("7", 100);
        ahead.flush();
        behind.saw("7", 80);
        behind.flush();
        assertThat(RevisionMarks.in(state).mark("7")).isEqualTo(100);
        assertThat(RevisionMarks.in(state).all()).isEqualTo(Map.of("7", 100L));
    }

    /**
     * A mark raised while the last one is being written is written a second later, with no further
     * answer and no close: a process killed after its last answer leaves it on disk.
     */
    @Test
    void aMarkRaisedWhileOneIsWrittenIsWrittenSoonAfter() throws Exception {
        Path state = dir.resolve("state");
        RevisionMarks marks = RevisionMarks.in(state);
        java.util.concurrent.atomic.AtomicBoolean once = new java.util.concurrent.atomic.AtomicBoolean();
        marks.whileWriting(() -> {
            if (once.compareAndSet(false, true)) {
                marks.saw("7", 20); // an answer that comes while the mark of 10 is being written
            }
        });
        marks.saw("7", 10);
        dev.proclive.Eventually.until("the mark raised during the write is on disk", Duration.ofSeconds(10),
                () -> RevisionMarks.in(state).mark("7") == 20);
        assertThat(once).isTrue();
    }

    @Test
    void aMadeStateDirectoryIsTheOwnersOnly() throws Exception {
        Path state = dir.resolve("a/b/state");
        RevisionMarks marks = RevisionMarks.in(state);
        marks.saw("7", 10);
        marks.flush();
        assertThat(Files.getPosixFilePermissions(state)).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(state.resolve("etcd-7")).hasContent("10");
    }

    @Test
    void aStateDirectoryThatCannotBeUsedChangesNothing() throws Exception {
        URI member = member();
        Path shared = Files.createDirectory(dir.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx")); // another user could put marks in it
        Files.writeString(shared.resolve("etcd-7"), "1000\n");
        Path real = Files.createDirectory(dir.resolve("real"));
        Files.writeString(real.resolve("etcd-7"), "1000\n");
        Path link = Files.createSymbolicLink(dir.resolve("link"), real);
        Path underAFile = Files.writeString(dir.resolve("file"), "").resolve("state");
        for (Path state : List.of(shared, link, underAFile)) {
            try (EtcdGateway etcd = client(member, RevisionMarks.in(state))) {
                write(etcd); // at 50: a mark of 1000 there is not read, and the call is not failed for want of one
            }
        }
        assertThat(shared.resolve("etcd-7")).hasContent("1000");
        assertThat(real.resolve("etcd-7")).as("nothing written through the link").hasContent("1000");
        assertThat(Files.isRegularFile(dir.resolve("file"))).as("nothing made under a file").isTrue();
    }

    @Test
    void aStateDirectoryOfAnotherUserIsNotUsed() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "only root can give a directory to another user");
        URI member = member();
        Path theirs = Files.createDirectory(dir.resolve("theirs"));
        Files.writeString(theirs.resolve("etcd-7"), "1000\n");
        Files.setAttribute(theirs, "unix:uid", 65534, LinkOption.NOFOLLOW_LINKS); // nobody's
        try (EtcdGateway etcd = client(member, RevisionMarks.in(theirs))) {
            write(etcd);
        }
        assertThat(theirs.resolve("etcd-7")).hasContent("1000");
    }

    @Test
    void theUserDirectoryIsTheNamedOneOnly() {
        String s = dir.resolve("s").toString();
        String x = dir.resolve("x").toString();
        assertThat(RevisionMarks.userDirectory(Map.of("PROCLIVE_STATE_DIR", s, "XDG_STATE_HOME", x))).contains(Path.of(s));
        assertThat(RevisionMarks.userDirectory(Map.of("PROCLIVE_STATE_DIR", "off", "XDG_STATE_HOME", x)))
                .as("off, or any path that is not absolute: none").isEmpty();
        assertThat(RevisionMarks.userDirectory(Map.of("XDG_STATE_HOME", x)))
                .as("never unless asked for: a wiped cluster made again keeps its id").isEmpty();
        assertThat(RevisionMarks.userDirectory(Map.of())).isEmpty();
    }
}
