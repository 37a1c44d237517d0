package dev.proclive.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.proclive.Identity;
import dev.proclive.ProcLive;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lease store on a real etcd member that serves only {@code https} (a certificate made for the
 * test by {@code openssl}) and requires a user and password: verified against a CA file, refused
 * without it, logged in from the endpoint's user, refused with a wrong password or none.
 */
@EnabledOnOs(OS.LINUX)
class EtcdSecureIT {

    @TempDir
    static Path dir;
    static EtcdCluster etcd;
    static Path ca;
    static URI plain;

    @BeforeAll
    static void startSecureEtcd() throws Exception {
        EtcdCluster.binary();
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/openssl")), "openssl makes the test's certificate; .ci/run installs it");
        Path key = dir.resolve("server.key");
        ca = dir.resolve("server.crt");
        Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-keyout", key.toString(), "-out", ca.toString(), "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0).as("openssl made a certificate").isTrue();
        HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(ca)).connectTimeout(Duration.ofSeconds(1)).build();
        etcd = EtcdCluster.start(dir, 1, "https", List.of("--cert-file", ca.toString(), "--key-file", key.toString()),
                trusting);
        plain = etcd.endpoints().get(0);
        for (String[] call : new String[][] {
                {"/v3/auth/user/add", "{\"name\":\"root\",\"password\":\"s3cret\"}"},
                {"/v3/auth/role/add", "{\"name\":\"root\"}"},
                {"/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}"},
                {"/v3/auth/enable", "{}"}}) {
            HttpResponse<String> r = trusting.send(HttpRequest.newBuilder(plain.resolve(call[0]))
                    .POST(HttpRequest.BodyPublishers.ofString(call[1])).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("%s: %s", call[0], r.body()).isEqualTo(200);
        }
    }

    private static SSLContext trusting(Path cert) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(cert)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        return tls;
    }

    @AfterAll
    static void stopEtcd() throws Exception {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Test
    void withTheCaFileAndTheUserItGrantsAndReleases() throws Exception {
        LeaseStore store = LeaseStore.builder().etcd(List.of(plain)).prefix("secure/")
                .credentials("root", "s3cret".toCharArray()).caFile(ca).build();
        Identity me = ProcLive.current().orElseThrow();
        Acquisition a = store.acquire("build", me);
        assertThat(a).isInstanceOf(Acquisition.Granted.class);
        assertThat(((Acquisition.Granted) a).lease().isValid()).isTrue();
        assertThat(((Acquisition.Granted) a).lease().release()).isTrue();
    }

    @Test
    void aMemberNotVerifiedByTheTrustStoreIsRefused() throws Exception {
        LeaseStore store = LeaseStore.builder().etcd(List.of(plain)).prefix("secure/")
                .credentials("root", "s3cret".toCharArray()).build();
        Identity me = ProcLive.current().orElseThrow();
        assertThatThrownBy(() -> store.acquire("build", me)).isInstanceOf(IOException.class)
                .hasMessageContaining("no etcd member answered");
    }

    @Test
    void aPasswordInsideAnEndpointIsRefusedBeforeAnythingIsAsked() {
        URI withPassword = URI.create("https://root:s3cret@127.0.0.1:" + plain.getPort());
        assertThatThrownBy(() -> LeaseStore.builder().etcd(List.of(withPassword)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("credentials(user, password)")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void aWrongPasswordOrNoUserIsRefusedNeverGranted() throws Exception {
        Identity me = ProcLive.current().orElseThrow();
        LeaseStore wrong = LeaseStore.builder().etcd(List.of(plain)).prefix("secure/")
                .credentials("root", "guess".toCharArray()).caFile(ca).build();
        assertThatThrownBy(() -> wrong.acquire("build", me)).isInstanceOf(IOException.class)
                .hasMessageContaining("refused the login of user 'root'").hasMessageNotContaining("guess");
        LeaseStore nobody = LeaseStore.builder().etcd(List.of(plain)).prefix("secure/").caFile(ca).build();
        assertThatThrownBy(() -> nobody.acquire("build", me)).isInstanceOf(IOException.class);
    }

    @Test
    void theEndpointsInAChildsEnvironmentNameNoPassword() throws Exception {
        LeaseStore store = LeaseStore.builder().etcd(List.of(plain)).prefix("secure/")
                .credentials("root", "s3cret".toCharArray()).caFile(ca).build();
        Acquisition s = store.spawn("spawned", new ProcessBuilder("sh", "-c", "echo \"$PROCLIVE_LEASE_ETCD\""));
        Process child = ((Acquisition.Started) s).process();
        String seen = new String(child.getInputStream().readAllBytes()).strip();
        assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(seen).isEqualTo("https://127.0.0.1:" + plain.getPort()).doesNotContain("s3cret");
    }

    /** The CLI jar run with {@code env} added: exit code, stdout and stderr. */
    private static String[] cli(java.util.Map<String, String> env, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-jar", Path.of(System.getProperty("proclive.cliJar", "target/proclive-cli.jar"))
                .toAbsolutePath().toString()));
        command.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(command);
        b.environment().putAll(env);
        Process p = b.start();
        java.util.concurrent.CompletableFuture<byte[]> err = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return p.getErrorStream().readAllBytes();
            } catch (IOException e) {
                return new byte[0];
            }
        });
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new String[] {Integer.toString(p.exitValue()), out, new String(err.join(), java.nio.charset.StandardCharsets.UTF_8)};
    }

    @Test
    void thePasswordNeedNotBeOnTheCommandLineAndLeaseRunsCommandNeverSeesIt() throws Exception {
        String url = "https://root@127.0.0.1:" + plain.getPort();
        String[] run = cli(java.util.Map.of("PROCLIVE_ETCD_PASSWORD", "s3cret"), "lease", "run", "viaenv", "--etcd", url,
                "--etcd-ca", ca.toString(), "--prefix", "secure/", "--", "sh", "-c", "echo \"pw=[$PROCLIVE_ETCD_PASSWORD]\"");
        assertThat(run[0]).as(run[2]).isEqualTo("0");
        assertThat(run[1].strip()).isEqualTo("pw=[]");
        Path file = dir.resolve("password");
        Files.writeString(file, "s3cret\n");
        String[] acquired = cli(java.util.Map.of(), "lease", "acquire", "viafile", "--etcd", url, "--etcd-ca", ca.toString(),
                "--prefix", "secure/", "--etcd-password-file", file.toString(), "--holder", Long.toString(ProcessHandle.current().pid()));
        assertThat(acquired[0]).as(acquired[2]).isEqualTo("0");
        String[] wrong = cli(java.util.Map.of("PROCLIVE_ETCD_PASSWORD", "guess"), "lease", "show", "viafile", "--etcd", url,
                "--etcd-ca", ca.toString(), "--prefix", "secure/");
        assertThat(wrong[0]).isEqualTo("74");
        assertThat(wrong[2]).contains("refused the login of user 'root'").doesNotContain("guess");
    }
}
