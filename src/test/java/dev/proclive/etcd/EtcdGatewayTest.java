package dev.proclive.etcd;

import dev.proclive.Eventually;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The JSON gateway client against a small HTTP server that answers as etcd's gateway does: what it
 * sends (base64 keys, 64-bit integers as strings, a lease left out when 0), what it reads back, how
 * it passes an unavailable member over and keeps a refusal, and how it logs in. On every OS; the
 * real etcd is in the {@code Etcd*IT} tests.
 */
class EtcdGatewayTest {

    static final ObjectMapper JSON = new ObjectMapper();
    final List<HttpServer> servers = new ArrayList<>();
    /** Every request a server got: path, Authorization header, body. */
    final List<String[]> got = new CopyOnWriteArrayList<>();

    /** Paces the writes of a member that trickles. */
    private final java.util.concurrent.ScheduledExecutorService drip = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "trickling etcd");
        t.setDaemon(true);
        return t;
    });

    @AfterEach
    void stop() {
        servers.forEach(s -> s.stop(0));
        drip.shutdownNow();
    }

    /** A server whose answer to each path {@code answer} gives (null: 404). */
    private URI server(Function<String[], String> answer) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        s.createContext("/", (HttpExchange x) -> {
            String body = new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String[] request = {x.getRequestURI().getPath(), x.getRequestHeaders().getFirst("Authorization"), body};
            got.add(request);
            String reply = answer.apply(request);
            byte[] bytes = (reply == null ? "{}" : reply).getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(reply == null ? 404 : 200, bytes.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(bytes);
            }
        });
        s.start();
        servers.add(s);
        return URI.create("http://127.0.0.1:" + s.getAddress().getPort());
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static EtcdGateway open(URI... endpoints) throws IOException {
        return EtcdGateway.open(List.of(endpoints), Optional.empty(), Duration.ofSeconds(2), dev.proclive.text.StrictJson.mapper());
    }

    @Test
    void aTransactionIsSentAsTheGatewayWantsItAndItsReadsComeBack() throws Exception {
        URI e = server(r -> "{\"header\":{\"revision\":\"42\"},\"succeeded\":false,\"responses\":[{\"response_range\":"
                + "{\"kvs\":[{\"key\":\"" + b64("p/a") + "\",\"create_revision\":\"7\",\"mod_revision\":\"40\","
                + "\"version\":\"3\",\"value\":\"" + b64("{}") + "\",\"lease\":\"99\"}]}},{\"response_range\":{}}]}");
        Etcd.Outcome o = open(e).txn(List.of(new Etcd.Compare("p/a", 12)),
                List.of(new Etcd.Put("p/a", "v".getBytes(StandardCharsets.UTF_8), 0),
                        new Etcd.Put("p/a.fence", new byte[0], 77)),
                List.of(new Etcd.Get("p/a"), new Etcd.Get("p/a.fence")));
        JsonNode sent = JSON.readTree(got.get(0)[2]);
        assertThat(got.get(0)[0]).isEqualTo("/v3/kv/txn");
        assertThat(sent.path("compare").get(0).toString()).isEqualTo("{\"key\":\"" + b64("p/a")
                + "\",\"target\":\"MOD\",\"result\":\"EQUAL\",\"mod_revision\":\"12\"}");
        assertThat(sent.path("success").get(0).path("request_put").has("lease")).as("a lease of 0 is left out").isFalse();
        assertThat(sent.path("success").get(1).path("request_put").path("lease").asText()).isEqualTo("77");
        assertThat(sent.path("failure").get(1).path("request_range").path("key").asText()).isEqualTo(b64("p/a.fence"));
        assertThat(o.succeeded()).isFalse();
        assertThat(o.revision()).isEqualTo(42);
        assertThat(o.reads()).hasSize(2);
        Etcd.KeyValue kv = o.reads().get(0).orElseThrow();
        assertThat(kv.key()).isEqualTo("p/a");
        assertThat(new String(kv.value(), StandardCharsets.UTF_8)).isEqualTo("{}");
        assertThat(List.of(kv.createRevision(), kv.modRevision(), kv.lease())).containsExactly(7L, 40L, 99L);
        assertThat(o.reads().get(1)).as("a key that is absent").isEmpty();
    }

    @Test
    void anUnreachableOrUnavailableMemberIsPassedOverARefusalIsNot() throws Exception {
        URI closed = URI.create("http://127.0.0.1:" + closedPort());
        URI unavailable = server(r -> "{\"error\":\"etcdserver: no leader\",\"code\":14,\"message\":\"etcdserver: no leader\"}");
        URI good = server(r -> "{\"header\":{\"revision\":\"5\"},\"ID\":\"1234\",\"TTL\":\"30\"}");
        EtcdGateway etcd = open(closed, unavailable, good);
        assertThat(etcd.grant(Duration.ofMillis(29_001))).isEqualTo(1234);
        assertThat(JSON.readTree(got.get(got.size() - 1)[2]).path("TTL").asText()).as("whole seconds, rounded up").isEqualTo("30");
        int before = got.size();
        etcd.grant(Duration.ofSeconds(30));
        assertThat(got.size() - before).as("the member that answered last is asked first").isEqualTo(1);

        URI refusing = server(r -> "{\"error\":\"etcdserver: too many operations\",\"code\":3,\"message\":\"etcdserver: too many operations in txn request\"}");
        assertThatThrownBy(() -> open(refusing, good).txn(List.of(), List.of(new Etcd.Get("k"))))
                .isInstanceOf(IOException.class).hasMessageContaining("too many operations");
        assertThatThrownBy(() -> open(closed).txn(List.of(), List.of(new Etcd.Get("k"))))
                .isInstanceOf(IOException.class).hasMessageContaining("no etcd member answered").hasMessageContaining("cannot connect");
    }

    /** A server that sends headers and then {@code body} writes what it will, until the client goes. */
    private URI hostile(java.util.function.Consumer<OutputStream> body) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        s.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "hostile etcd");
            t.setDaemon(true);
            return t;
        }));
        s.createContext("/", (HttpExchange x) -> {
            x.getRequestBody().readAllBytes();
            x.sendResponseHeaders(200, 0); // chunked: no length, no end
            try (OutputStream out = x.getResponseBody()) {
                body.accept(out);
            } catch (IOException | RuntimeException gone) {
                // the client hung up: what a bounded client does
            }
        });
        s.start();
        servers.add(s);
        return URI.create("http://127.0.0.1:" + s.getAddress().getPort());
    }

    /**
     * Gateways opened and closed one after another, each with a watch stream cancelled, leave no
     * threads behind: a client of java.net.http keeps its selector thread after such a stream.
     */
    @Test
    void gatewaysClosedAfterAWatchLeaveNoThreadsBehind() throws Exception {
        java.util.concurrent.CountDownLatch hangUp = new java.util.concurrent.CountDownLatch(1);
        URI e = hostile(out -> {
            try {
                out.write("{\"result\":{\"header\":{\"revision\":\"1\"},\"created\":true}}\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                hangUp.await(60, TimeUnit.SECONDS);
            } catch (IOException | InterruptedException gone) {
                // the client hung up
            }
        });
        java.util.function.Supplier<Long> selectors = () -> Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().endsWith("SelectorManager") && t.isAlive()).count();
        long before = selectors.get();
        try {
            for (int i = 0; i < 12; i++) {
                EtcdGateway etcd = EtcdGateway.open(List.of(e), Optional.empty(), Duration.ofMillis(1500),
                        dev.proclive.text.StrictJson.mapper());
                java.util.concurrent.CompletableFuture<Void> watch = etcd.watchPrefix("p/", 1, (revision, changes) -> { });
                Thread.sleep(50);
                watch.cancel(false);
                etcd.close();
            }
            System.gc();
            Eventually.until("no more than one client's selector thread more than before (" + before + ")",
                    Duration.ofSeconds(10), selectors::get, n -> n <= before + 1);
        } finally {
            hangUp.countDown();
        }
    }

    @Test
    void anEndlessOrTricklingAnswerFailsThatMemberWithinTheDeadlineAndTheNextIsTried() throws Exception {
        URI endless = hostile(out -> {
            byte[] chunk = new byte[64 << 10];
            java.util.Arrays.fill(chunk, (byte) ' ');
            try {
                while (true) {
                    out.write(chunk);
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        URI trickling = hostile(out -> { // a member that trickles: one byte a tenth of a second until hung up on
            java.util.concurrent.CompletableFuture<Void> hungUp = new java.util.concurrent.CompletableFuture<>();
            drip.scheduleAtFixedRate(() -> {
                try {
                    out.write(' ');
                    out.flush();
                } catch (IOException e) {
                    hungUp.complete(null);
                    throw new java.io.UncheckedIOException(e); // ends this drip
                }
            }, 0, 100, TimeUnit.MILLISECONDS);
            hungUp.join();
        });
        URI good = server(r -> "{\"header\":{\"revision\":\"5\"},\"ID\":\"1234\",\"TTL\":\"30\"}");
        long before = System.nanoTime();
        assertThat(open(endless, trickling, good).grant(Duration.ofSeconds(30))).as("the third member's answer").isEqualTo(1234);
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before);
        assertThat(took).as("the endless answer cut at its bound, the trickle at the 2 s deadline").isLessThan(30_000);
        assertThatThrownBy(() -> open(endless).grant(Duration.ofSeconds(30))).isInstanceOf(IOException.class)
                .hasMessageContaining("no etcd member answered").hasMessageContaining("larger than 4 MiB");
        assertThatThrownBy(() -> open(trickling).grant(Duration.ofSeconds(30))).isInstanceOf(IOException.class)
                .hasMessageContaining("no etcd member answered").hasMessageContaining("within 2000 ms");
    }

    @Test
    void aWriteOnAGoneLeaseSaysWhichLease() throws Exception {
        URI e = server(r -> "{\"error\":\"etcdserver: requested lease not found\",\"code\":5,"
                + "\"message\":\"etcdserver: requested lease not found\"}");
        assertThatThrownBy(() -> open(e).txn(List.of(), List.of(new Etcd.Put("k", new byte[0], 555))))
                .isInstanceOfSatisfying(Etcd.LeaseNotFound.class, n -> assertThat(n.lease()).isEqualTo(555));
    }

    @Test
    void leasesAnswerTheirTtlAndAGoneOneZeroOrMinusOne() throws Exception {
        Map<String, String> answers = new ConcurrentHashMap<>(Map.of(
                "/v3/lease/keepalive", "{\"result\":{\"header\":{},\"ID\":\"9\",\"TTL\":\"17\"}}",
                "/v3/lease/timetolive", "{\"header\":{},\"ID\":\"9\",\"TTL\":\"12\",\"grantedTTL\":\"30\"}",
                "/v3/lease/revoke", "{\"error\":\"etcdserver: requested lease not found\",\"code\":5,\"message\":\"etcdserver: requested lease not found\"}"));
        URI e = server(r -> answers.get(r[0]));
        EtcdGateway etcd = open(e);
        assertThat(etcd.keepAlive(9)).isEqualTo(17);
        assertThat(etcd.timeToLive(9)).isEqualTo(12);
        etcd.revoke(9); // already gone: no error
        answers.put("/v3/lease/keepalive", "{\"result\":{\"header\":{},\"ID\":\"9\"}}");
        answers.put("/v3/lease/timetolive", "{\"header\":{},\"ID\":\"9\",\"TTL\":\"-1\"}");
        assertThat(etcd.keepAlive(9)).as("a gone lease's keep-alive has no TTL").isZero();
        assertThat(etcd.timeToLive(9)).isEqualTo(-1);
    }

    /**
     * A keep-alive whose first member hangs asks the next too once its hedge has passed, and takes
     * that answer without waiting out the call's timeout; the member that answered is asked first
     * from then on. (The hung member answers 5 once freed, 20 s on at the latest; the next answers 17.)
     */
    @Test
    void aKeepAliveAsksTheNextMemberTooOnceTheFirstHasNotAnsweredWithinItsHedge() throws Exception {
        java.util.concurrent.CountDownLatch freed = new java.util.concurrent.CountDownLatch(1);
        URI hung = server(r -> {
            try {
                freed.await(20, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "{\"result\":{\"header\":{},\"ID\":\"9\",\"TTL\":\"5\"}}";
        });
        URI good = server(r -> "{\"result\":{\"header\":{},\"ID\":\"9\",\"TTL\":\"17\"}}");
        EtcdGateway etcd = EtcdGateway.open(List.of(hung, good), Optional.empty(), Duration.ofSeconds(60),
                dev.proclive.text.StrictJson.mapper());
        try {
            assertThat(etcd.keepAlive(9, Duration.ofMillis(100))).as("the next member's answer").isEqualTo(17);
            assertThat(etcd.keepAlive(9, Duration.ofSeconds(60)))
                    .as("a hedge as long as the timeout is a plain call, to the member that answered last").isEqualTo(17);
        } finally {
            freed.countDown();
        }
    }

    /**
     * A read (a range, a transaction of reads alone) asks the next member too once the first has not
     * answered within a fifth of the timeout, and the calls after start at the member that answered:
     * a member that hangs costs a command that, not the timeout. A write is sent to one member at a time.
     */
    @Test
    void aReadAsksTheNextMemberTooOnceTheFirstHangsAndAWriteWaitsForItsMember() throws Exception {
        java.util.concurrent.CountDownLatch freed = new java.util.concurrent.CountDownLatch(1);
        String answer = "{\"header\":{\"revision\":\"9\"},\"succeeded\":true,\"responses\":[],\"kvs\":[{\"key\":\""
                + b64("p/a") + "\",\"mod_revision\":\"4\",\"value\":\"\"}]}";
        List<String> calls = new CopyOnWriteArrayList<>(); // "MEMBER PATH", as each member takes a request up
        URI hung = server(r -> {
            calls.add("hung " + r[0]);
            try {
                freed.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return answer;
        });
        URI good = server(r -> {
            calls.add("good " + r[0]);
            return answer;
        });
        Duration timeout = Duration.ofSeconds(10);
        Etcd.Compare unchanged = new Etcd.Compare("p/a", 4);
        Etcd.Put put = new Etcd.Put("p/a", new byte[0], 0);
        try {
            EtcdGateway reader = EtcdGateway.open(List.of(hung, good), Optional.empty(), timeout,
                    dev.proclive.text.StrictJson.mapper());
            long began = System.nanoTime();
            assertThat(reader.txn(List.of(), List.of(new Etcd.Get("p/a"))).reads()).hasSize(0);
            assertThat(Duration.ofNanos(System.nanoTime() - began)).as("a read hedged: answered before the timeout")
                    .isLessThan(timeout);
            assertThat(calls).containsExactly("hung /v3/kv/txn", "good /v3/kv/txn");
            assertThat(reader.txn(List.of(unchanged), List.of(put)).succeeded()).isTrue();
            assertThat(calls).as("a write after goes to the member that answered").endsWith("good /v3/kv/txn")
                    .hasSize(3);

            EtcdGateway lister = EtcdGateway.open(List.of(hung, good), Optional.empty(), timeout,
                    dev.proclive.text.StrictJson.mapper());
            began = System.nanoTime();
            assertThat(lister.list("p/")).extracting(Etcd.KeyValue::key).containsExactly("p/a");
            assertThat(Duration.ofNanos(System.nanoTime() - began)).as("a range hedged").isLessThan(timeout);
            assertThat(calls).endsWith("good /v3/kv/range");

            EtcdGateway writer = EtcdGateway.open(List.of(hung, good), Optional.empty(), timeout,
                    dev.proclive.text.StrictJson.mapper());
            calls.clear();
            CompletableFuture<Etcd.Outcome> write = CompletableFuture.supplyAsync(() -> {
                try {
                    return writer.txn(List.of(unchanged), List.of(put));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Thread.sleep(timeout.dividedBy(5).plusSeconds(2).toMillis()); // past the hedge a read would have
            assertThat(calls).as("no other member was sent the write while its member hung").isEmpty();
            freed.countDown();
            assertThat(write.get(30, java.util.concurrent.TimeUnit.SECONDS).succeeded()).isTrue();
            assertThat(calls).as("sent once, to its member").containsOnlyOnce("hung /v3/kv/txn")
                    .doesNotContain("good /v3/kv/txn");

            // the reader's first read, which lost, has its answer now: the calls after start where they did
            Eventually.until("the hung member answered the reads it held", Duration.ofSeconds(30),
                    () -> calls.contains("hung /v3/kv/range"));
            Thread.sleep(200);
            calls.clear();
            assertThat(reader.txn(List.of(unchanged), List.of(put)).succeeded()).isTrue();
            assertThat(calls).as("a late answer of the call that lost moves nothing").containsExactly("good /v3/kv/txn");
        } finally {
            freed.countDown();
        }
    }

    /**
     * A login's password is the one given when the client was opened: a caller that clears its
     * array once open returns (as the store's builder asks of its callers) still logs in, also
     * again when the token expired.
     */
    @Test
    void aLoginsPasswordIsTakenWhenTheClientIsOpenedNotWhenItFirstLogsIn() throws Exception {
        URI e = server(r -> r[0].equals("/v3/auth/authenticate") ? "{\"header\":{},\"token\":\"tok\"}"
                : "{\"header\":{\"revision\":\"3\"},\"kvs\":[]}");
        char[] password = "s3cret".toCharArray();
        EtcdGateway etcd = EtcdGateway.open(List.of(e), Optional.empty(),
                Optional.of(new EtcdGateway.Login("ci", password)), Duration.ofSeconds(2),
                dev.proclive.text.StrictJson.mapper(), RevisionMarks.none());
        java.util.Arrays.fill(password, '\0');
        assertThat(etcd.list("p/")).isEmpty();
        assertThat(JSON.readTree(got.get(0)[2]).path("password").asText()).as("the password given at open")
                .isEqualTo("s3cret");
    }

    @Test
    void aUserInTheEndpointLogsInSendsTheTokenAndLogsInAgainWhenItExpired() throws Exception {
        int[] logins = {0};
        boolean[] expireOnce = {true};
        URI e = server(r -> {
            if (r[0].equals("/v3/auth/authenticate")) {
                logins[0]++;
                return "{\"header\":{},\"token\":\"tok" + logins[0] + "\"}";
            }
            if (logins[0] == 1 && expireOnce[0] && "tok1".equals(r[1])) {
                expireOnce[0] = false;
                return "{\"error\":\"etcdserver: invalid auth token\",\"code\":16,\"message\":\"etcdserver: invalid auth token\"}";
            }
            return "{\"header\":{\"revision\":\"3\"},\"kvs\":[]}";
        });
        URI withUser = URI.create("http://root:p%40ss@127.0.0.1:" + e.getPort());
        EtcdGateway etcd = open(withUser);
        assertThat(etcd.list("p/")).isEmpty();
        assertThat(JSON.readTree(got.get(0)[2]).path("password").asText()).as("decoded from the URI").isEqualTo("p@ss");
        assertThat(logins[0]).as("logged in again once the token expired").isEqualTo(2);
        assertThat(got.get(got.size() - 1)[1]).isEqualTo("tok2");
        assertThat(etcd.endpoints()).isEqualTo("http://127.0.0.1:" + e.getPort()).doesNotContain("p%40ss");
    }

    @Test
    void aListIsARangeOverThePrefix() throws Exception {
        URI e = server(r -> "{\"header\":{},\"kvs\":[{\"key\":\"" + b64("p/x") + "\",\"mod_revision\":\"4\",\"value\":\"\"}]}");
        assertThat(open(e).list("p/")).extracting(Etcd.KeyValue::key).containsExactly("p/x");
        JsonNode sent = JSON.readTree(got.get(0)[2]);
        assertThat(sent.path("key").asText()).isEqualTo(b64("p/"));
        assertThat(sent.path("range_end").asText()).isEqualTo(b64("p0"));
        assertThat(EtcdGateway.rangeEnd(new byte[] {'a', (byte) 0xff})).containsExactly('b');
        assertThat(EtcdGateway.rangeEnd(new byte[] {(byte) 0xff})).containsExactly(0);
    }

    @Test
    void aListIsReadInPagesAtTheRevisionOfTheFirst() throws Exception {
        URI e = server(r -> {
            JsonNode asked;
            try {
                asked = JSON.readTree(r[2]);
            } catch (IOException bad) {
                return null;
            }
            if (asked.path("revision").isMissingNode()) {
                return "{\"header\":{\"revision\":\"9\"},\"more\":true,\"kvs\":[{\"key\":\"" + b64("p/a")
                        + "\",\"value\":\"\"},{\"key\":\"" + b64("p/b") + "\",\"value\":\"\"}]}";
            }
            return "{\"header\":{\"revision\":\"9\"},\"kvs\":[{\"key\":\"" + b64("p/c") + "\",\"value\":\"\"}]}";
        });
        assertThat(open(e).list("p/")).extracting(Etcd.KeyValue::key).containsExactly("p/a", "p/b", "p/c");
        assertThat(got).hasSize(2);
        JsonNode first = JSON.readTree(got.get(0)[2]);
        assertThat(first.path("limit").asText()).isEqualTo(Integer.toString(EtcdGateway.PAGE));
        JsonNode second = JSON.readTree(got.get(1)[2]);
        assertThat(second.path("key").asText()).as("the key after the last one read")
                .isEqualTo(Base64.getEncoder().encodeToString("p/b\0".getBytes(StandardCharsets.UTF_8)));
        assertThat(second.path("range_end").asText()).isEqualTo(b64("p0"));
        assertThat(second.path("revision").asText()).as("the same revision").isEqualTo("9");
    }

    /** Two keys, each with a large value where more than one is asked for: more than one answer can carry. */
    private static Function<String[], String> twoLargeValues() {
        String big = "A".repeat((EtcdGateway.MAX_ANSWER / 2 / 4 + 1) * 4); // base64 of 1.5 MiB of zeros and more
        return r -> {
            int limit;
            try {
                limit = JSON.readTree(r[2]).path("limit").asInt();
            } catch (IOException bad) {
                return null;
            }
            StringBuilder kvs = new StringBuilder();
            for (int i = 0; i < Math.min(limit, 2); i++) {
                kvs.append(i == 0 ? "" : ",").append("{\"key\":\"").append(b64("p/" + i)).append("\",\"value\":\"")
                        .append(limit > 1 ? big : "").append("\"}");
            }
            return "{\"header\":{\"revision\":\"3\"},\"more\":false,\"kvs\":[" + kvs + "]}";
        };
    }

    /**
     * With a member that hangs asked first, the page too large is still asked again in halves: of the
     * two failed calls of a hedged read, the one that says the answer was too large is the one told.
     */
    @Test
    void aPageTooLargeIsAskedAgainInHalvesThoughTheMemberAskedFirstHangs() throws Exception {
        java.util.concurrent.CountDownLatch freed = new java.util.concurrent.CountDownLatch(1);
        URI hung = server(r -> {
            try {
                freed.await(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        URI large = server(twoLargeValues());
        try {
            EtcdGateway etcd = EtcdGateway.open(List.of(hung, large), Optional.empty(), Duration.ofSeconds(2),
                    dev.proclive.text.StrictJson.mapper());
            assertThat(etcd.list("p/")).extracting(Etcd.KeyValue::key).containsExactly("p/0");
        } finally {
            freed.countDown();
        }
    }

    @Test
    void aPageTooLargeIsAskedAgainInHalvesThoughTheMembersAskedAfterItHang() throws Exception {
        java.util.concurrent.CountDownLatch freed = new java.util.concurrent.CountDownLatch(1);
        Function<String[], String> hang = r -> {
            try {
                freed.await(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        };
        URI hung = server(hang);
        URI large = server(twoLargeValues());
        URI alsoHung = server(hang);
        try {
            // the too large answer comes before a hung member in the order of both the call and its hedge
            EtcdGateway etcd = EtcdGateway.open(List.of(hung, large, alsoHung), Optional.empty(),
                    Eventually.scaled(Duration.ofMillis(500)), dev.proclive.text.StrictJson.mapper());
            assertThat(etcd.list("p/")).extracting(Etcd.KeyValue::key).containsExactly("p/0");
        } finally {
            freed.countDown();
        }
    }

    @Test
    void aPageTooLargeForOneAnswerIsAskedAgainInHalves() throws Exception {
        URI e = server(twoLargeValues());
        assertThat(open(e).list("p/")).isNotEmpty();
        List<Integer> limits = got.stream().map(r -> {
            try {
                return JSON.readTree(r[2]).path("limit").asInt();
            } catch (IOException bad) {
                return -1;
            }
        }).toList();
        assertThat(limits).as("the first page halved until it fits").startsWith(EtcdGateway.PAGE, EtcdGateway.PAGE / 2)
                .contains(1);
    }

    @Test
    void aGarbageAnswerIsReadAsUtf8NeverGuessed() throws Exception {
        URI e = server(r -> "\u0000x\u0000y garbage");
        assertThatThrownBy(() -> open(e).list("p/")).isInstanceOf(IOException.class)
                .satisfies(t -> assertThat(t.getMessage()).doesNotContain("\u7800", "\u7900"));
    }

    @Test
    void aGrantWithoutAPositiveIdIsAFailedAnswerOfThatMember() throws Exception {
        URI noId = server(r -> "{\"header\":{},\"TTL\":\"5\"}");
        URI zero = server(r -> "{\"header\":{},\"ID\":\"0\",\"TTL\":\"5\"}");
        URI good = server(r -> "{\"header\":{},\"ID\":\"7587\",\"TTL\":\"5\"}");
        assertThat(open(noId, zero, good).grant(Duration.ofSeconds(5))).isEqualTo(7587);
        assertThatThrownBy(() -> open(noId, zero).grant(Duration.ofSeconds(5))).isInstanceOf(IOException.class)
                .hasMessageContaining("without a positive \"ID\"");
    }

    /**
     * A prefix watch is one stream over the prefix's range ({@code range_end}: the prefix's end),
     * from after the revision given: every change of every answer handed on in order with the
     * revision of its key, an answer without events (progress) handed on empty, and a watch etcd
     * cancels as compacted ends normally (anything may have changed unseen).
     */
    @Test
    void aPrefixWatchIsOneStreamOverTheRangeHandingOnEveryChangeAndEndsWhenCompacted() throws Exception {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        servers.add(s);
        s.createContext("/v3/watch", x -> {
            got.add(new String[] {"/v3/watch", null, new String(x.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)});
            x.sendResponseHeaders(200, 0);
            OutputStream out = x.getResponseBody();
            for (String line : List.of("{\"result\":{\"header\":{\"revision\":\"41\"},\"created\":true}}",
                    "{\"result\":{\"header\":{\"revision\":\"44\"},\"events\":[{\"kv\":{\"key\":\"" + b64("p/a")
                            + "\",\"mod_revision\":\"43\"}},{\"type\":\"DELETE\",\"kv\":{\"key\":\"" + b64("p/b")
                            + "\",\"mod_revision\":\"44\"}}]}}",
                    "{\"result\":{\"header\":{\"revision\":\"50\"}}}",
                    "{\"result\":{\"header\":{\"revision\":\"50\"},\"canceled\":true,\"compact_revision\":\"45\"}}")) {
                out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
            try {
                Thread.sleep(10_000); // the stream stays open: only the client ends it
            } catch (InterruptedException ignored) {
                // the test ends
            }
        });
        s.start();
        EtcdGateway etcd = open(URI.create("http://127.0.0.1:" + s.getAddress().getPort()));
        List<String> seen = new CopyOnWriteArrayList<>();
        java.util.concurrent.CompletableFuture<Void> watch = etcd.watchPrefix("p/", 41, (revision, changes) -> {
            seen.add(revision + ":" + changes.stream().map(c -> c.key() + "@" + c.revision()).toList());
        });
        watch.get(10, TimeUnit.SECONDS); // normally: compacted
        assertThat(seen).containsExactly("41:[]", "44:[p/a@43, p/b@44]", "50:[]");
        JsonNode sent = JSON.readTree(got.get(0)[2]).path("create_request");
        assertThat(sent.path("key").asText()).isEqualTo(b64("p/"));
        assertThat(sent.path("range_end").asText()).isEqualTo(b64("p0"));
        assertThat(sent.path("start_revision").asText()).isEqualTo("42");
    }

    @Test
    void endpointsThatAreNotHostAndPortAreRefusedWithoutTheirPassword() {
        for (String bad : List.of("ftp://h:1", "http://h", "http://h:1/v3", "http://h:1?x=1", "h:1")) {
            assertThatThrownBy(() -> open(URI.create(bad))).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> open(URI.create("http://u:secret@h:1/path"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> open(URI.create("http://u:p@h:1"), URI.create("http://h:2")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("same user");
        assertThatThrownBy(() -> EtcdGateway.open(List.of(), Optional.empty(), Duration.ofSeconds(1), dev.proclive.text.StrictJson.mapper()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * A connection that ends before any byte of the answer (a kept-open one the member closed idle,
     * or one a call abandoned beside this one closed in the pool) is not the member failing: the call
     * is sent once more. A member that never answers is asked twice, not more.
     */
    @Test
    void aKeptOpenConnectionThatEndsBeforeTheAnswerIsTriedOnceMoreOnANewOne() throws Exception {
        String grant = "{\"header\":{},\"ID\":\"7587\",\"TTL\":\"5\"}";
        // the first connection answers its first call and closes on its second; the next ones answer
        try (RawMember member = new RawMember((connection, call) -> connection == 0 && call == 1 ? null : grant);
             RawMember mute = new RawMember((connection, call) -> null)) {
            EtcdGateway etcd = open(member.uri());
            assertThat(etcd.grant(Duration.ofSeconds(5))).isEqualTo(7587);
            assertThat(etcd.grant(Duration.ofSeconds(5))).as("the second call, sent again").isEqualTo(7587);
            assertThat(member.calls).containsExactly("0:0", "0:1", "1:0");

            assertThatThrownBy(() -> open(mute.uri()).grant(Duration.ofSeconds(5))).isInstanceOf(IOException.class)
                    .hasMessageContaining("no etcd member answered");
            assertThat(mute.calls).as("sent once more, not again and again").containsExactly("0:0", "1:0");
        }
    }

    /**
     * A write is not sent again: the member may have read it and made it before the connection
     * ended, and sent again its compares would fail on its own change. It fails as unanswered, and
     * the book reads what etcd has.
     */
    @Test
    void aWriteWhoseConnectionEndsBeforeTheAnswerIsNotSentAgain() throws Exception {
        String grant = "{\"header\":{},\"ID\":\"7587\",\"TTL\":\"5\"}";
        String txn = "{\"header\":{\"revision\":\"9\"},\"succeeded\":true,\"responses\":[]}";
        try (RawMember member = new RawMember((connection, call) -> connection == 0 && call == 1 ? null
                : call == 0 && connection == 0 ? grant : txn)) {
            EtcdGateway etcd = open(member.uri());
            etcd.grant(Duration.ofSeconds(5)); // the connection is kept open for the next call
            assertThatThrownBy(() -> etcd.txn(List.of(new Etcd.Compare("k", 0)),
                    List.of(new Etcd.Put("k", new byte[] {1}, 0)), List.of()))
                    .isInstanceOf(IOException.class).hasMessageContaining("no etcd member answered");
            assertThat(member.calls).as("the write was sent once").containsExactly("0:0", "0:1");
            assertThat(etcd.txn(List.of(), List.of(new Etcd.Get("k")), List.of()).succeeded())
                    .as("a read is, on a new connection").isTrue();
        }
    }

    /**
     * A call abandoned by an interrupt leaves its connection to end its answer: cancelled at once, it
     * could close the connection just as the answer, read whole, put it back in the pool for the
     * next call of any store. The next call takes the same connection.
     */
    @Test
    void aCallInterruptedWhileItsAnswerIsComingLeavesItsConnectionForTheNext() throws Exception {
        String grant = "{\"header\":{},\"ID\":\"7587\",\"TTL\":\"5\"}";
        try (RawMember member = new RawMember((connection, call) -> {
            if (connection == 0 && call == 0) {
                try {
                    Thread.sleep(500); // the first answer comes late
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return grant;
        })) {
            EtcdGateway etcd = open(member.uri());
            CompletableFuture<Throwable> first = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    etcd.grant(Duration.ofSeconds(5));
                    first.complete(null);
                } catch (Throwable e) {
                    first.complete(e);
                }
            });
            caller.start();
            Eventually.until("the first call on its way", Duration.ofSeconds(10), () -> member.calls, c -> !c.isEmpty());
            caller.interrupt();
            assertThat(first.get(10, TimeUnit.SECONDS)).isInstanceOf(java.io.InterruptedIOException.class);
            Eventually.until("its answer sent", Duration.ofSeconds(10), () -> member.answered, a -> a.contains("0:0"));
            Thread.sleep(Eventually.scaled(Duration.ofMillis(500)).toMillis()); // and read whole by the client
            assertThat(etcd.grant(Duration.ofSeconds(5))).isEqualTo(7587);
            assertThat(member.calls).as("the next call on the same connection").containsExactly("0:0", "0:1");
        }
    }

    /**
     * An interrupted write is waited for to its end, then thrown as interrupted: what the caller reads
     * next (the book reads what etcd has after a write whose answer was lost) sees it made, not on
     * its way. It is not sent again, nor to another member.
     */
    @Test
    void anInterruptedWriteIsWaitedForToItsEndThenToldInterrupted() throws Exception {
        String txn = "{\"header\":{\"revision\":\"9\"},\"succeeded\":true,\"responses\":[]}";
        try (RawMember member = new RawMember((connection, call) -> {
            try {
                Thread.sleep(500); // the write is made, its answer comes late
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return txn;
        }); RawMember other = new RawMember((connection, call) -> txn)) {
            EtcdGateway etcd = open(member.uri(), other.uri());
            CompletableFuture<String> told = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    etcd.txn(List.of(new Etcd.Compare("k", 0)), List.of(new Etcd.Put("k", new byte[] {1}, 0)), List.of());
                    told.complete("answered");
                } catch (Throwable e) {
                    told.complete(e.getClass().getSimpleName() + ", answer sent " + member.answered.contains("0:0")
                            + ", interrupted " + Thread.currentThread().isInterrupted());
                }
            });
            caller.start();
            Eventually.until("the write on its way", Duration.ofSeconds(10), () -> member.calls, c -> !c.isEmpty());
            caller.interrupt();
            assertThat(told.get(10, TimeUnit.SECONDS)).isEqualTo("InterruptedIOException, answer sent true, interrupted true");
            assertThat(member.calls).containsExactly("0:0");
            assertThat(other.calls).as("no other member asked").isEmpty();
        }
    }

    /** A member on a plain socket: {@code answer} gives the JSON for the n-th call on the c-th connection, or null to close it unanswered. */
    private static final class RawMember implements AutoCloseable {
        interface Answer {
            String to(int connection, int call);
        }

        final List<String> calls = new CopyOnWriteArrayList<>();
        /** The calls answered, as {@link #calls} names them, once their answer is flushed. */
        final List<String> answered = new CopyOnWriteArrayList<>();
        private final ServerSocket socket = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());

        RawMember(Answer answer) throws IOException {
            Thread accepting = new Thread(() -> {
                for (int c = 0; !socket.isClosed(); c++) {
                    java.net.Socket s;
                    try {
                        s = socket.accept();
                    } catch (IOException closed) {
                        return;
                    }
                    int connection = c;
                    Thread serving = new Thread(() -> serve(s, connection, answer), "raw etcd member " + c);
                    serving.setDaemon(true);
                    serving.start();
                }
            }, "raw etcd member");
            accepting.setDaemon(true);
            accepting.start();
        }

        /** Each connection on a thread of its own: one the client left open holds up no other. */
        private void serve(java.net.Socket s, int c, Answer answer) {
            try (s) {
                java.io.InputStream in = new java.io.BufferedInputStream(s.getInputStream());
                for (int n = 0; ; n++) {
                    int length = requestBodyLength(in);
                    if (length < 0) {
                        return;
                    }
                    in.readNBytes(length);
                    calls.add(c + ":" + n);
                    String reply = answer.to(c, n);
                    if (reply == null) {
                        return; // closed, nothing answered
                    }
                    byte[] bytes = reply.getBytes(StandardCharsets.UTF_8);
                    s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                            + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().write(bytes);
                    s.getOutputStream().flush();
                    answered.add(c + ":" + n);
                }
            } catch (IOException closed) {
                // the client closed it
            }
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort());
        }

        /** Reads a request's head: its Content-Length, or -1 at the end of the connection. */
        private static int requestBodyLength(java.io.InputStream in) throws IOException {
            StringBuilder head = new StringBuilder();
            int b;
            while ((b = in.read()) >= 0) {
                head.append((char) b);
                if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) {
                    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length:\\s*(\\d+)").matcher(head);
                    return m.find() ? Integer.parseInt(m.group(1)) : 0;
                }
            }
            return -1;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
