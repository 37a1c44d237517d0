package dev.proclive.etcd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * {@link Etcd} over etcd's v3 JSON gateway (keys and values in base64, 64-bit integers as strings,
 * false and zero fields left out), with {@code java.net.http} and Jackson: no client library.
 *
 * <p>Endpoints are tried in order, the one that answered last first: a member that cannot be
 * reached, or answers "unavailable" (no leader, a request timed out), hands the call to the next.
 * A user and password in the endpoints ({@code https://user:password@host:2379}), or a
 * {@link Login}, log in through {@code /v3/auth/authenticate}; the token is fetched again when etcd
 * says it expired.
 *
 * <p>One cluster, going forward: the first answer that names its cluster ({@code header.cluster_id})
 * pins it, and a member of any other cluster is a failed member (two clusters behind one endpoint
 * list would hand out one lease twice). So is one whose key-value answer is at a revision below one
 * known when the call was sent, by this client or, through {@link RevisionMarks}, by this user's
 * earlier ones: a cluster restored from an older snapshot, or wiped, whose fences would repeat.
 */
public final class EtcdGateway implements Etcd {

    /** gRPC's codes etcd answers with. */
    private static final int DEADLINE_EXCEEDED = 4;
    private static final int UNAVAILABLE = 14;
    private static final int UNAUTHENTICATED = 16;
    /** The largest answer read: a record is small, a range of a store's records a few hundred kilobytes. */
    static final int MAX_ANSWER = 4 << 20;
    /** How many keys one page of {@link #list} asks for: far below {@link #MAX_ANSWER} for records. */
    static final int PAGE = 200;
    private static final String AUTHENTICATE = "/v3/auth/authenticate";
    /** By timeout, and whether a CA file is given and the digest of its bytes ({@link #client}). */
    private static final Map<List<Object>, HttpClient> CLIENTS = new ConcurrentHashMap<>();
    /** Where hedged calls run, so that their caller may stop waiting for one; an idle thread ends after a minute. */
    private static final ExecutorService HEDGES = Executors.newCachedThreadPool(run -> {
        Thread t = new Thread(run, "proclive-etcd-hedge");
        t.setDaemon(true);
        return t;
    });

    /** The caller's one mapper (duplicate keys and trailing content refused). */
    private final ObjectMapper json;
    private final List<URI> endpoints;
    private final Optional<Login> login;
    private final HttpClient http;
    private final Duration timeout;
    private final RevisionMarks marks;
    /** The highest revision a key-value answer carried: an answer to a later call below it went back. */
    private final AtomicLong revision = new AtomicLong();
    /** The cluster the first answer that named one named. */
    private final AtomicReference<String> cluster = new AtomicReference<>();
    private volatile int current;
    private volatile String token;

    private EtcdGateway(List<URI> endpoints, Optional<Login> login, HttpClient http, Duration timeout,
                        ObjectMapper json, RevisionMarks marks) {
        this.endpoints = endpoints;
        this.login = login;
        this.http = http;
        this.timeout = timeout;
        this.json = json;
        this.marks = marks;
    }

    public record Login(String user, char[] password) {
        @Override
        public String toString() {
            return "Login[" + user + "]"; // never the password
        }
    }

    /**
     * A client of the members at {@code endpoints} ({@code http://} or {@code https://}, host and
     * port, no path), each call given {@code timeout}.
     *
     * @param caFile PEM certificates to verify {@code https} members with, instead of the JVM's trust store
     * @throws IllegalArgumentException naming the endpoint, if one is not of that form, or the
     *                                  endpoints disagree on the user
     * @throws IOException              if {@code caFile} cannot be read or holds no certificate
     */
    public static EtcdGateway open(List<URI> endpoints, Optional<Path> caFile, Duration timeout, ObjectMapper json)
            throws IOException {
        return open(endpoints, caFile, Optional.empty(), timeout, json, RevisionMarks.none());
    }

    /**
     * As {@link #open(List, Optional, Duration, ObjectMapper)}, logging in as {@code login} where
     * given (then the endpoints name no user), and comparing every key-value answer also with the
     * mark {@code marks} keeps of its cluster, raising it.
     */
    public static EtcdGateway open(List<URI> endpoints, Optional<Path> caFile, Optional<Login> login, Duration timeout,
                                   ObjectMapper json, RevisionMarks marks) throws IOException {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("an etcd store needs at least one endpoint");
        }
        Optional<String> userInfo = Optional.ofNullable(endpoints.get(0).getRawUserInfo());
        List<URI> bases = new ArrayList<>();
        for (URI e : endpoints) {
            String scheme = e.getScheme();
            String path = e.getRawPath() == null ? "" : e.getRawPath();
            if (!"http".equals(scheme) && !"https".equals(scheme) || e.getHost() == null || e.getPort() < 0
                    || !path.isEmpty() && !path.equals("/") || e.getRawQuery() != null || e.getRawFragment() != null) {
                throw new IllegalArgumentException("an etcd endpoint is http://HOST:PORT or https://HOST:PORT, not "
                        + shown(e));
            }
            if (!Optional.ofNullable(e.getRawUserInfo()).equals(userInfo)) {
                throw new IllegalArgumentException("every etcd endpoint names the same user, or none does: "
                        + shown(e));
            }
            bases.add(URI.create(scheme + "://" + e.getRawAuthority().substring(e.getRawAuthority().indexOf('@') + 1)));
        }
        if (userInfo.isPresent()) {
            if (login.isPresent()) {
                throw new IllegalArgumentException("a login is given apart from the endpoints, which then name"
                        + " no user");
            }
            String[] parts = userInfo.get().split(":", 2);
            if (parts.length != 2 || parts[0].isEmpty()) {
                throw new IllegalArgumentException("an etcd endpoint's user is USER:PASSWORD@");
            }
            login = Optional.of(new Login(URLDecoder.decode(parts[0], StandardCharsets.UTF_8),
                    URLDecoder.decode(parts[1], StandardCharsets.UTF_8).toCharArray()));
        }
        // the password as given now: a caller may clear its array once this returns
        login = login.map(l -> new Login(l.user(), l.password().clone()));
        return new EtcdGateway(List.copyOf(bases), login, client(caFile, timeout), timeout, json, marks);
    }

    /**
     * One client for every gateway of the same timeout and trust: java.net.http's client has no close on
     * JDK 17, and one whose watch streams were cancelled keeps its selector thread and descriptors for good,
     * so a client made per store would leave them behind each closed store.
     */
    private static HttpClient client(Optional<Path> caFile, Duration timeout) throws IOException {
        byte[] pem = caFile.isPresent() ? Files.readAllBytes(caFile.get()) : new byte[0];
        List<Object> key;
        try {
            key = List.of(timeout, caFile.isPresent(),
                    HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(pem)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        HttpClient known = CLIENTS.get(key);
        if (known != null) {
            return known;
        }
        HttpClient.Builder http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout);
        if (caFile.isPresent()) {
            http.sslContext(trusting(caFile.get(), pem));
        }
        HttpClient made = http.build();
        HttpClient raced = CLIENTS.putIfAbsent(key, made);
        return raced != null ? raced : made;
    }

    /** An endpoint as a message may show it: without its user and password. */
    private static String shown(URI e) {
        String text = e.toString();
        int scheme = text.indexOf("://");
        int at = text.lastIndexOf('@');
        if (at >= 0) { // a user and a password, also where the URI did not parse them as such (a '#' in the password)
            text = scheme >= 0 && scheme + 3 <= at ? text.substring(0, scheme + 3) + text.substring(at + 1)
                    : text.substring(at + 1);
        }
        return "'" + text + "'";
    }

    private static SSLContext trusting(Path caFile, byte[] pem) throws IOException {
        try (InputStream in = new ByteArrayInputStream(pem)) {
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            int n = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                trust.setCertificateEntry("ca-" + n++, c);
            }
            if (n == 0) {
                throw new IOException(caFile + ": no certificate in it");
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext tls = SSLContext.getInstance("TLS");
            tls.init(null, tmf.getTrustManagers(), null);
            return tls;
        } catch (GeneralSecurityException e) {
            throw new IOException(caFile + ": not PEM certificates (" + e.getMessage() + ")", e);
        }
    }

    @Override
    public String endpoints() {
        return endpoints.stream().map(URI::toString).collect(Collectors.joining(","));
    }

    @Override
    public Optional<String> cluster() {
        return Optional.ofNullable(cluster.get());
    }

    @Override
    public Outcome txn(List<Compare> compares, List<Op> ops, List<Op> otherwise) throws IOException {
        ObjectNode body = json.createObjectNode();
        ArrayNode compare = body.putArray("compare");
        for (Compare c : compares) {
            compare.addObject().put("key", b64(c.key())).put("target", "MOD").put("result", "EQUAL")
                    .put("mod_revision", Long.toString(c.modRevision()));
        }
        ops(body.putArray("success"), ops);
        if (!otherwise.isEmpty()) {
            ops(body.putArray("failure"), otherwise);
        }
        JsonNode r;
        try {
            boolean reads = compares.isEmpty() && otherwise.isEmpty() && ops.stream().allMatch(op -> op instanceof Get);
            r = reads ? hedged("/v3/kv/txn", body, readHedge(), "a read") : call("/v3/kv/txn", body);
        } catch (EtcdException e) {
            if (!e.getMessage().contains("requested lease not found")) {
                throw e;
            }
            throw new LeaseNotFound(e.getMessage(), ops.stream().mapToLong(op -> op instanceof Put p ? p.lease() : 0)
                    .filter(lease -> lease != 0).findFirst().orElse(0));
        }
        List<Optional<KeyValue>> reads = new ArrayList<>();
        for (JsonNode response : r.path("responses")) {
            if (response.has("response_range")) {
                JsonNode kvs = response.path("response_range").path("kvs");
                reads.add(kvs.isArray() && kvs.size() > 0 ? Optional.of(keyValue(kvs.get(0))) : Optional.empty());
            }
        }
        return new Outcome(r.path("succeeded").asBoolean(false), r.path("header").path("revision").asLong(), reads);
    }

    private static void ops(ArrayNode into, List<Op> ops) {
        for (Op op : ops) {
            if (op instanceof Put p) {
                ObjectNode put = into.addObject().putObject("request_put").put("key", b64(p.key()))
                        .put("value", b64(p.value()));
                if (p.lease() != 0) {
                    put.put("lease", Long.toString(p.lease()));
                }
            } else if (op instanceof Delete d) {
                into.addObject().putObject("request_delete_range").put("key", b64(d.key()));
            } else {
                into.addObject().putObject("request_range").put("key", b64(((Get) op).key()));
            }
        }
    }

    /**
     * Every key under {@code prefix}, in pages of {@value #PAGE} keys (each continued from the key
     * after the last one read; a page too large for one answer asked again in halves), all at the
     * revision of the first page: a prefix that holds more than one answer can carry is still read whole.
     */
    @Override
    public List<KeyValue> list(String prefix) throws IOException {
        byte[] from = prefix.getBytes(StandardCharsets.UTF_8);
        byte[] end = rangeEnd(from);
        long revision = 0;
        int limit = PAGE;
        List<KeyValue> all = new ArrayList<>();
        while (true) {
            ObjectNode body = json.createObjectNode().put("key", b64(from)).put("range_end", b64(end))
                    .put("limit", Integer.toString(limit));
            if (revision != 0) {
                body.put("revision", Long.toString(revision));
            }
            JsonNode page;
            try {
                page = hedged("/v3/kv/range", body, readHedge(), "a read of " + prefix);
            } catch (IOException e) {
                if (limit > 1 && tooLarge(e)) {
                    limit /= 2;
                    continue;
                }
                throw e;
            }
            if (revision == 0) {
                revision = page.path("header").path("revision").asLong(0);
            }
            JsonNode kvs = page.path("kvs");
            for (JsonNode kv : kvs) {
                all.add(keyValue(kv));
            }
            if (!page.path("more").asBoolean(false) || kvs.size() == 0) {
                return all;
            }
            byte[] last = all.get(all.size() - 1).key().getBytes(StandardCharsets.UTF_8);
            from = Arrays.copyOf(last, last.length + 1); // the next key after it: itself and a NUL
        }
    }

    /** {@code now}, unless {@code before} says an answer was too large: the caller then asks for less, so it is kept. */
    private static IOException unlessTooLarge(IOException before, IOException now) {
        return before != null && tooLarge(before) ? before : now;
    }

    private static boolean tooLarge(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BoundedBody.TooLarge) {
                return true;
            }
        }
        return false;
    }

    /** The first key after every key that starts with {@code prefix} (etcd's {@code --prefix}). */
    static byte[] rangeEnd(byte[] prefix) {
        byte[] end = prefix.clone();
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return Arrays.copyOf(end, i + 1);
            }
        }
        return new byte[] {0}; // every key
    }

    @Override
    public long grant(Duration ttl) throws IOException {
        long seconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
        JsonNode r = call("/v3/lease/grant", json.createObjectNode().put("TTL", Long.toString(seconds)),
                answer -> !answer.path("error").asText("").isEmpty() || answer.path("ID").asLong(0) > 0,
                "a lease grant without a positive \"ID\"");
        if (!r.path("error").asText("").isEmpty()) {
            throw new IOException("etcd refused a lease: " + r.path("error").asText());
        }
        return r.path("ID").asLong();
    }

    @Override
    public long keepAlive(long id) throws IOException {
        return call("/v3/lease/keepalive", lease(id)).path("result").path("TTL").asLong(0);
    }

    @Override
    public long keepAlive(long id, Duration hedge) throws IOException {
        return hedged("/v3/lease/keepalive", lease(id), hedge, "a keep-alive of lease " + id)
                .path("result").path("TTL").asLong(0);
    }

    /**
     * A call that changes nothing, asking the next member too once the first has not answered
     * within {@code hedge}; the first answer counts. A plain call where there is no other member,
     * or the hedge is no shorter than a call's timeout.
     */
    private JsonNode hedged(String path, ObjectNode body, Duration hedge, String what) throws IOException {
        if (endpoints.size() < 2 || hedge.compareTo(timeout) >= 0) {
            return call(path, body);
        }
        Answers answers = new Answers();
        AtomicInteger asking = new AtomicInteger(current);
        hedging(() -> call(path, body, r -> true, "", current, at -> {
            asking.set(at);
            return !answers.answer.isDone(); // no further member once the other call has answered
        })).whenComplete(answers::told);
        try {
            try {
                answers.answer.get(Math.max(1, hedge.toMillis()), TimeUnit.MILLISECONDS);
            } catch (TimeoutException slow) {
                answers.askedAgain();
                int next = asking.get() + 1; // after the member the first call waits for: it may have passed others over
                hedging(() -> call(path, body, r -> true, "", next, at -> !answers.answer.isDone()))
                        .whenComplete(answers::told);
            } catch (ExecutionException e) {
                // told below
            }
            // each call gives up after the timeout at every member: bounded, though nothing should come to it
            long most = Math.multiplyExact(timeout.toMillis() + 1000, endpoints.size());
            return answers.answer.get(most, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new HttpTimeoutException("no etcd member answered " + what);
        } catch (ExecutionException e) {
            throw cause(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for " + what);
        } finally {
            answers.answer.cancel(false); // answered, or given up: a call still under way asks no further member
        }
    }

    /**
     * The calls of one hedged call: the first answer, or once every call asked has failed, the failure
     * that says most (a revision gone back, an answer too large to read: what the caller acts on),
     * the others added to it.
     */
    private static final class Answers {
        final CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        private final List<Throwable> failures = new ArrayList<>();
        private int asked = 1;

        synchronized void askedAgain() {
            asked++;
        }

        void told(JsonNode r, Throwable x) {
            if (x == null) {
                answer.complete(r);
                return;
            }
            Throwable most;
            synchronized (this) {
                failures.add(x);
                if (failures.size() < asked) {
                    return;
                }
                most = failures.stream().filter(f -> f instanceof WentBack || tooLarge(f)).findFirst()
                        .orElse(failures.get(failures.size() - 1));
                failures.stream().filter(f -> f != most).forEach(most::addSuppressed);
            }
            answer.completeExceptionally(most);
        }
    }

    /**
     * How long a read waits for one member before the next is asked too: a fifth of a call's timeout.
     * The member that answers first is asked first by the calls after, writes included, so a member
     * that hangs costs a command this, not the timeout.
     */
    private Duration readHedge() {
        return timeout.dividedBy(5);
    }

    /** What a call's future failed with, as the call would have thrown it. */
    private static IOException cause(ExecutionException e) {
        Throwable cause = e.getCause();
        return cause instanceof IOException io ? io : new IOException(String.valueOf(cause), cause);
    }

    private interface Call {
        JsonNode answer() throws IOException;
    }

    /** On a daemon thread of {@link #HEDGES}: a call the caller may stop waiting for. */
    private static CompletableFuture<JsonNode> hedging(Call call) {
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        HEDGES.execute(() -> {
            try {
                answer.complete(call.answer());
            } catch (Throwable e) { // an Error too: its caller would wait for an answer that never comes
                answer.completeExceptionally(e);
            }
        });
        return answer;
    }

    @Override
    public long timeToLive(long id) throws IOException {
        return call("/v3/lease/timetolive", lease(id)).path("TTL").asLong(-1);
    }

    @Override
    public Optional<java.util.Set<String>> attached(long id) throws IOException {
        java.util.Set<String> keys = new java.util.HashSet<>();
        call("/v3/lease/timetolive", lease(id).put("keys", true)).path("keys").forEach(k -> keys.add(text(k.asText())));
        return Optional.of(keys);
    }

    @Override
    public void revoke(long id) throws IOException {
        try {
            call("/v3/lease/revoke", lease(id));
        } catch (EtcdException e) {
            if (!e.getMessage().contains("lease not found")) {
                throw e;
            }
        }
    }

    private ObjectNode lease(long id) {
        return json.createObjectNode().put("ID", Long.toString(id));
    }

    /** One stream over the prefix's range, read by a {@link WatchStream}. */
    @Override
    public CompletableFuture<Void> watchPrefix(String prefix, long afterRevision, Changes changes) {
        ObjectNode body = json.createObjectNode();
        body.putObject("create_request").put("key", b64(prefix))
                .put("range_end", b64(rangeEnd(prefix.getBytes(StandardCharsets.UTF_8))))
                .put("start_revision", Long.toString(afterRevision + 1));
        String what = "the watch of prefix " + prefix;
        HttpRequest request;
        try {
            request = request(endpoints.get(current), "/v3/watch", body).timeout(Duration.ofDays(1)).build();
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        WatchStream stream = new WatchStream(json, what, cluster::get, changes);
        http.sendAsync(request, HttpResponse.BodyHandlers.fromLineSubscriber(stream)).whenComplete((response, e) -> {
            if (e != null) {
                stream.done.completeExceptionally(e);
            }
        });
        return stream.done;
    }

    @Override
    public void close() {
        marks.flush(); // the client is shared (client()): it stays for the next gateway
    }

    private JsonNode call(String path, ObjectNode body) throws IOException {
        return call(path, body, answer -> true, "");
    }

    private JsonNode call(String path, ObjectNode body, Predicate<JsonNode> valid, String what) throws IOException {
        return call(path, body, valid, what, current, at -> true);
    }

    /**
     * Posts {@code body} to {@code path}, trying the endpoints in turn from the {@code from}th (modulo
     * their number), each told to {@code asking} before it is asked (false: no further member is) and
     * once it answered (false: it is not asked first by the calls after): the answer, or why not. An
     * answer {@code valid} refuses is a failed answer of that member ({@code what} says what it was).
     */
    private JsonNode call(String path, ObjectNode body, Predicate<JsonNode> valid, String what, int from,
                          java.util.function.IntPredicate asking) throws IOException {
        IOException last = null;
        WentBack back = null;
        long floor = revision.get(); // what any answer to a call sent from now on is at, at least
        // So are the marks on disk, each raised by an answer received before they are read: the pinned
        // cluster's, or, before any answer named one, every cluster's.
        String pinned = cluster.get();
        boolean keyValue = path.startsWith("/v3/kv/");
        boolean writes = writes(path, body);
        Map<String, Long> marked = !keyValue ? Map.of()
                : pinned == null ? marks.all() : Map.of(pinned, marks.mark(pinned));
        for (int tried = 0; tried < endpoints.size(); tried++) {
            int at = (from + tried) % endpoints.size();
            if (!asking.test(at)) {
                break;
            }
            URI base = endpoints.get(at);
            try {
                JsonNode r = sendOnce(base, path, body, writes);
                if (r.path("code").asInt() == UNAUTHENTICATED && login.isPresent()) {
                    token = null; // expired: log in again, once
                    r = send(base, path, body, writes);
                }
                int code = r.path("code").asInt();
                if (code != 0) {
                    EtcdException refused = new EtcdException(base + path + ": " + r.path("message").asText(r.toString()));
                    if (code != UNAVAILABLE && code != DEADLINE_EXCEEDED) {
                        throw refused;
                    }
                    last = unlessTooLarge(last, refused);
                    continue;
                }
                if (!valid.test(r)) {
                    last = unlessTooLarge(last, new IOException(base + path + " answered " + what));
                    continue;
                }
                Optional<IOException> foreign = foreign(base, r);
                if (foreign.isPresent()) {
                    last = unlessTooLarge(last, foreign.get());
                    continue;
                }
                Optional<WentBack> behind = keyValue ? wentBack(base, r, floor, marked) : Optional.empty();
                if (behind.isPresent()) {
                    back = behind.get();
                    last = back;
                    continue;
                }
                if (asking.test(at)) { // a hedged call that lost (answered late) does not move the calls after
                    current = at;
                }
                return r;
            } catch (EtcdException | InterruptedIOException e) {
                throw e;
            } catch (IOException e) {
                last = unlessTooLarge(last, new IOException(base + ": " + failure(e), e));
            }
        }
        if (back != null) {
            throw back; // its words say what an operator must do
        }
        if (last == null) {
            throw new IOException("no longer waited for: another member answered");
        }
        throw new IOException("no etcd member answered (" + endpoints() + "): " + last.getMessage(), last);
    }

    /**
     * Why answer {@code r} of {@code base} is not one of the cluster this client first reached, or
     * empty. A lease keep-alive's answer carries its header inside {@code result}.
     */
    private Optional<IOException> foreign(URI base, JsonNode r) {
        String id = header(r).path("cluster_id").asText("");
        if (id.isEmpty()) {
            return Optional.empty(); // it does not say: nothing to compare
        }
        cluster.compareAndSet(null, id);
        String pinned = cluster.get();
        if (pinned.equals(id)) {
            return Optional.empty();
        }
        return Optional.of(new IOException(base + ": a member of etcd cluster " + id + ", not of cluster " + pinned
                + ", which this store reached first: the endpoints lead to two clusters, and a lease would be held"
                + " in each; list the members of one cluster only"));
    }

    /**
     * Why {@code r}, a key-value answer of {@code base} to a call sent when an answer at revision
     * {@code floor} was known already, cannot be trusted: its revision is lower, or below the mark
     * of its cluster. (Key-value reads and writes are linearizable: answered at a revision at least
     * as new as any committed before the call; a lease call's header is only the answering member's.)
     */
    private Optional<WentBack> wentBack(URI base, JsonNode r, long floor, Map<String, Long> marked) {
        long at = header(r).path("revision").asLong(0);
        if (at <= 0) {
            return Optional.empty();
        }
        String id = header(r).path("cluster_id").asText("");
        long mark = marked.getOrDefault(id, 0L);
        if (at < floor && floor >= mark) {
            return Optional.of(wentBack(floor, at, base, Optional.empty()));
        }
        if (at < mark) {
            return Optional.of(wentBack(mark, at, base, marks.file(id)));
        }
        revision.accumulateAndGet(at, Math::max);
        if (!id.isEmpty()) {
            marks.saw(id, at);
        }
        return Optional.empty();
    }

    private static JsonNode header(JsonNode r) {
        return r.has("header") ? r.path("header") : r.path("result").path("header");
    }

    private static WentBack wentBack(long from, long to, URI base, Optional<Path> mark) {
        return new WentBack("etcd's revision went back from " + from + " to " + to + " (" + base + "): the cluster"
                + " was restored from an older snapshot or its data was wiped, so the fences it hands out from now"
                + " on would repeat ones already given, and nothing is granted. An operator must bring the revision"
                + " past every fence handed out before leases are taken again (restore with etcdutl snapshot restore"
                + " --bump-revision N --mark-compacted, N above the highest fence in use), or make every resource"
                + " the leases protect forget the fences it saw. This store refuses until the revision is past "
                + from + " again" + mark.map(f -> "; " + from + " is the highest revision of this cluster this"
                + " user's clients saw, kept in " + f + ": if the restore was meant and nothing relies on the fences"
                + " handed out before it, delete that file").orElse(""));
    }

    /** What went wrong with a call, in words: the JDK leaves some messages out. */
    private String failure(IOException e) {
        if (e instanceof HttpTimeoutException) {
            return "no answer within " + timeout.toMillis() + " ms";
        }
        if (e instanceof ConnectException) {
            return "cannot connect" + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")");
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * {@link #send}, sent once more when the connection ended before any byte of the answer, unless
     * the call writes: a kept-open connection the member closed while it was idle, or one a call
     * abandoned beside this one (an interrupt, a deadline) closed after it went back to the pool, so
     * that the call may never have left. The JDK resends only GETs and HEADs so. A write is not sent
     * again: it may have gone through (the member read it and went away), and sent again its
     * compares would fail on its own change; failed, it leaves the book to read what etcd has.
     * Sending the rest again repeats nothing that matters: a read, a keep-alive, a lease's
     * time-to-live, a revoke, a login, a new etcd lease (one unused expires by itself).
     */
    private JsonNode sendOnce(URI base, String path, ObjectNode body, boolean writes) throws IOException {
        try {
            return send(base, path, body, writes);
        } catch (IOException e) {
            if (!staleConnection(e) || Thread.currentThread().isInterrupted() || writes) {
                throw e;
            }
            return send(base, path, body, writes);
        }
    }

    /** Whether {@code body}, posted to {@code path}, is a transaction that compares or changes keys. */
    private static boolean writes(String path, ObjectNode body) {
        if (!path.equals("/v3/kv/txn")) {
            return false;
        }
        if (body.path("compare").size() > 0 || body.has("failure")) {
            return true;
        }
        for (JsonNode op : body.path("success")) {
            if (!op.has("request_range")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code e} says the connection ended before any byte of the answer: in JDK 17's words,
     * its parser "received no bytes" (a new connection too); its {@code ConnectionExpiredException}
     * is named for JDKs that hand it on rather than its cause. No public type says it; another JDK's
     * words only cost the resend.
     */
    static boolean staleConnection(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String message = String.valueOf(t.getMessage());
            if (t.getClass().getSimpleName().equals("ConnectionExpiredException") || message.contains("received no bytes")) {
                return true;
            }
        }
        return false;
    }

    /** {@code writes}: {@link #writes} of this call, worked out once for all its members. */
    private JsonNode send(URI base, String path, ObjectNode body, boolean writes) throws IOException {
        HttpResponse<byte[]> answer = exchange(base, request(base, path, body).build(), writes);
        JsonNode r = json.readTree(new String(answer.body(), StandardCharsets.UTF_8)); // UTF-8, never guessed
        if (r == null || !r.isObject()) {
            throw new IOException("HTTP " + answer.statusCode() + ", not a JSON object");
        }
        return r;
    }

    /**
     * Sends {@code request} and reads the whole answer within one deadline ({@code timeout}, for
     * connecting, the headers and the body together) and one bound ({@value #MAX_ANSWER} bytes): an
     * endpoint that trickles its answer or streams one without end fails like one that does not
     * answer, and the next is tried.
     *
     * <p>An interrupt does not cancel the exchange at once: cancelled as its answer has just been read
     * whole, it would close its connection as it goes back to the pool, under the next call of any
     * thread that takes it. A call that changes nothing is left to end by its deadline; a write
     * ({@code writes}) is waited for until then, interrupt or not, so that what is read after it
     * (the book reads what etcd has when a write's answer is lost) sees it made or not made; the
     * interrupt is then thrown as such.
     */
    private HttpResponse<byte[]> exchange(URI base, HttpRequest request, boolean writes) throws IOException {
        BoundedBody body = new BoundedBody(MAX_ANSWER);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, timeout.toMillis()));
        CompletableFuture<HttpResponse<byte[]>> sent = http.sendAsync(request, info -> body);
        Runnable abandon = () -> {
            if (!sent.isDone()) {
                body.cancel(); // closes the connection: nothing more of this answer is read
                sent.cancel(true);
            }
        };
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    HttpResponse<byte[]> answer = sent.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    if (interrupted) {
                        throw interrupted(base);
                    }
                    return answer;
                } catch (InterruptedException e) {
                    if (writes) {
                        interrupted = true; // waited for to its end, made or not
                        continue;
                    }
                    CompletableFuture.delayedExecutor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS,
                            HEDGES).execute(abandon);
                    Thread.currentThread().interrupt();
                    throw interrupted(base);
                }
            }
        } catch (TimeoutException e) {
            abandon.run();
            throw interrupted ? interrupted(base)
                    : new HttpTimeoutException("no whole answer within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw interrupted ? interrupted(base) : cause(e);
        } catch (RuntimeException | Error e) {
            abandon.run();
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static InterruptedIOException interrupted(URI base) {
        return new InterruptedIOException("interrupted while calling etcd at " + base);
    }

    private HttpRequest.Builder request(URI base, String path, ObjectNode body) throws IOException {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path)).timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(json.writeValueAsBytes(body)));
        if (login.isPresent() && !path.equals(AUTHENTICATE)) {
            b.header("Authorization", token(base));
        }
        return b;
    }

    private String token(URI base) throws IOException {
        String t = token;
        if (t != null) {
            return t;
        }
        String user = login.get().user();
        ObjectNode body = json.createObjectNode().put("name", user).put("password", new String(login.get().password()));
        JsonNode r = json.readTree(new String(exchange(base, request(base, AUTHENTICATE, body).build(), false).body(),
                StandardCharsets.UTF_8));
        if (r == null || !r.hasNonNull("token")) {
            throw new EtcdException(base + ": etcd refused the login of user '" + user + "': "
                    + (r == null ? "no answer" : r.path("message").asText(r.toString())));
        }
        t = r.get("token").asText();
        token = t;
        return t;
    }

    private static KeyValue keyValue(JsonNode kv) {
        return new KeyValue(text(kv.path("key").asText()), Base64.getDecoder().decode(kv.path("value").asText("")),
                kv.path("create_revision").asLong(), kv.path("mod_revision").asLong(), kv.path("lease").asLong());
    }

    static String reason(String said) {
        String line = said.replaceAll("\\p{Cntrl}", " ");
        return line.length() <= 200 ? line : line.substring(0, 200) + "…";
    }

    private static String b64(String key) {
        return b64(key.getBytes(StandardCharsets.UTF_8));
    }

    private static String b64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    static String text(String base64) {
        return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
    }

    /** etcd answered, and refused: not a member to try the next one for. */
    static final class EtcdException extends IOException {
        private static final long serialVersionUID = 1L;

        EtcdException(String message) {
            super(message);
        }
    }
}
