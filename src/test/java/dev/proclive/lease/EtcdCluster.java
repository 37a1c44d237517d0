package dev.proclive.lease;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Real etcd members on free loopback ports with temporary data directories, started and stopped by
 * PID by the test: one for the rules, three for faults. Tests skip, saying why, where the
 * {@code etcd} binary (Debian's {@code etcd-server}) is not installed.
 */
public final class EtcdCluster implements AutoCloseable {

    /** One member: its name, ports, data directory and process (null while stopped). */
    public final class Member {
        final String name;
        final int clientPort;
        final int peerPort;
        final Path data;
        Process process;

        Member(String name, int clientPort, int peerPort, Path data) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.data = data;
        }

        /** Its data directory, for a test that copies it or puts another copy in its place while it is stopped. */
        public Path data() {
            return data;
        }

        public URI endpoint() {
            return URI.create(scheme + "://127.0.0.1:" + clientPort);
        }

        public void start() throws IOException {
            List<String> cmd = new ArrayList<>(List.of(binary(), "--name", name, "--data-dir", data.toString(),
                    "--listen-client-urls", endpoint().toString(), "--advertise-client-urls", endpoint().toString(),
                    "--listen-peer-urls", "http://127.0.0.1:" + peerPort,
                    "--initial-advertise-peer-urls", "http://127.0.0.1:" + peerPort,
                    "--initial-cluster", initialCluster(), "--initial-cluster-state", "new",
                    "--heartbeat-interval", "50", "--election-timeout", "500"));
            cmd.addAll(flags);
            process = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(data.resolveSibling(name + ".log").toFile()).start();
        }

        /** Kills it (SIGKILL) and waits for its end. */
        public void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }

        public void signal(String sig) throws IOException, InterruptedException {
            new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).start().waitFor();
        }
    }

    public final List<Member> members = new ArrayList<>();
    private final Path dir;
    private final String scheme;
    private final List<String> flags;
    private final HttpClient http;

    private EtcdCluster(Path dir, String scheme, List<String> flags, HttpClient http) {
        this.dir = dir;
        this.scheme = scheme;
        this.flags = flags;
        this.http = http;
    }

    /** The etcd binary, or the test is skipped saying it is missing. */
    public static String binary() {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(d, "etcd"))) {
                return Path.of(d, "etcd").toString();
            }
        }
        assumeTrue(false, "etcd is not installed (Debian's etcd-server): the etcd store's tests need a real member");
        return null;
    }

    /** {@code n} members under {@code dir}, started, with a leader. */
    public static EtcdCluster start(Path dir, int n) throws Exception {
        return start(dir, n, "http", List.of(), HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build());
    }

    /**
     * {@code n} members serving clients over {@code scheme} with these extra flags (TLS files),
     * {@code http} the client that can reach them; started, with a leader.
     */
    public static EtcdCluster start(Path dir, int n, String scheme, List<String> flags, HttpClient http) throws Exception {
        binary();
        try {
            return startIn(dir, n, scheme, flags, http);
        } catch (AssertionError noLeader) {
            // Members that elected nobody in time (seen once, as a normal user beside two churn loops) are
            // stopped: once more, on other ports and with other data, their logs kept beside the first.
            try {
                return startIn(Files.createDirectories(dir.resolve("again")), n, scheme, flags, http);
            } catch (Throwable again) {
                again.addSuppressed(noLeader);
                throw again;
            }
        }
    }

    private static EtcdCluster startIn(Path dir, int n, String scheme, List<String> flags, HttpClient http)
            throws Exception {
        EtcdCluster c = new EtcdCluster(dir, scheme, flags, http);
        for (int i = 0; i < n; i++) {
            Path data = dir.resolve("m" + i + ".data");
            c.members.add(c.new Member("m" + i, freePort(), freePort(), data));
        }
        try {
            for (Member m : c.members) {
                m.start();
            }
            c.awaitLeader(Duration.ofSeconds(30));
        } catch (Throwable e) {
            try {
                c.close(); // no caller would end the members started: they would write on into the directory
            } catch (Throwable closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        return c;
    }

    private String initialCluster() {
        return members.stream().map(m -> m.name + "=http://127.0.0.1:" + m.peerPort).collect(Collectors.joining(","));
    }

    /** The member that leads now, as its own status says. */
    public Member leader() throws Exception {
        for (Member m : members) {
            if (m.process == null || !m.process.isAlive()) {
                continue;
            }
            String body = http.send(HttpRequest.newBuilder(m.endpoint().resolve("/v3/maintenance/status"))
                    .timeout(Duration.ofSeconds(2)).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            java.util.regex.Matcher own = java.util.regex.Pattern.compile("\"member_id\":\"(\\d+)\"").matcher(body);
            java.util.regex.Matcher leader = java.util.regex.Pattern.compile("\"leader\":\"(\\d+)\"").matcher(body);
            if (own.find() && leader.find() && own.group(1).equals(leader.group(1))) {
                return m;
            }
        }
        throw new IllegalStateException("no member says it leads");
    }

    public List<URI> endpoints() {
        return members.stream().map(Member::endpoint).collect(Collectors.toList());
    }

    /** Waits until a write through each running member commits. */
    /** Takes a copy of member {@code m}'s data at {@code to}: the member is killed for it, then started again. */
    public Path copyData(Member m, Path to) throws Exception {
        m.kill();
        copyTree(m.data, to);
        m.start();
        awaitLeader(Duration.ofSeconds(30));
        return to;
    }

    /**
     * Restores member {@code m} from {@code copy} (a {@link #copyData} of it): killed, its data replaced
     * by the copy's (the same cluster, its revisions back), started again.
     */
    public void restoreData(Member m, Path copy) throws Exception {
        m.kill();
        try (java.util.stream.Stream<Path> files = Files.walk(m.data)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
        copyTree(copy, m.data);
        m.start();
        awaitLeader(Duration.ofSeconds(30));
    }

    /** Copies the tree {@code from} to {@code to}, which must not exist yet. */
    private static void copyTree(Path from, Path to) throws IOException {
        try (java.util.stream.Stream<Path> files = Files.walk(from)) {
            for (Path p : files.sorted().toList()) {
                Files.copy(p, to.resolve(from.relativize(p).toString()));
            }
        }
    }

    public void awaitLeader(Duration most) throws Exception {
        for (Member m : members) {
            if (m.process == null || !m.process.isAlive()) {
                continue;
            }
            dev.proclive.Eventually.until("etcd member " + m.name + " has a leader (see " + dir + ")", most, () -> {
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(m.endpoint().resolve("/v3/kv/put"))
                            .timeout(Duration.ofSeconds(2))
                            .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"cmVhZHk=\",\"value\":\"MQ==\"}")).build(),
                            HttpResponse.BodyHandlers.ofString());
                    return r.statusCode() == 200 && r.body().contains("\"revision\"");
                } catch (IOException e) {
                    return false; // not up yet
                }
            });
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (Member m : members) {
            if (m.process != null) {
                m.process.destroyForcibly();
                m.process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
