package io.leasehold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.interfaces.ECPrivateKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TLS against real servers with scripts/test-certs' certificates: verification of the server's
 * certificate and host name, mutual TLS, the environment variables (through the conformance
 * driver, a process of its own) and the redirect rule.
 */
class TlsTest {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static OpenApiValidator validator;
  private static Path certs;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeAll
  static void makeCerts() throws Exception {
    validator = OpenApiValidator.install();
    certs = Files.createTempDirectory("leasehold-java-certs");
    String script = System.getenv().getOrDefault("LEASEHOLD_TEST_CERTS", "../../scripts/test-certs");
    Process p = new ProcessBuilder(script, certs.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), "scripts/test-certs: " + out);
  }

  @AfterAll
  static void removeCerts() throws IOException {
    try (var files = Files.walk(certs)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    validator.check();
  }

  private static Path cert(String name) {
    return certs.resolve(name);
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    closing.add(0, c);
    return c;
  }

  /** A server speaking TLS with certificate {@code name}.pem/.key and more arguments. */
  private TestServer tlsServer(String name, String... more) throws Exception {
    List<String> args = new ArrayList<>(List.of("--tls-cert", cert(name + ".pem").toString(),
        "--tls-key", cert(name + ".key").toString()));
    args.addAll(List.of(more));
    return closeLater(new TestServer(null, "https", args));
  }

  /** A server that requires a client certificate of the test CA, subject worker.billing → billing. */
  private TestServer mutualServer() throws Exception {
    String config = MAPPER.writeValueAsString(Map.of(
        "tls", Map.of("cert", cert("server.pem").toString(), "key", cert("server.key").toString(),
            "client_ca", cert("ca.pem").toString(), "require_client_certificate", true),
        "tokens", List.of(Map.of("subject", "worker.billing", "principal", "billing",
            "namespaces", List.of("*"), "role", "admin"))));
    return closeLater(new TestServer(config, "https", List.of()));
  }

  private LeaseholdClient client(LeaseholdClient.Builder b) {
    return closeLater(b.ioTimeout(Duration.ofSeconds(10)).build());
  }

  /** The code {@code tls}, an UnreachableException whose cause is the TLS failure. */
  private static UnreachableException assertTlsRefused(Runnable call) {
    UnreachableException e = assertThrows(UnreachableException.class, call::run);
    assertEquals("tls", e.code(), e.getMessage());
    assertInstanceOf(javax.net.ssl.SSLException.class, e.getCause(), e.getMessage());
    return e;
  }

  /** The opened_by of the sessions {@code call} opens, from the answers the client received. */
  private static String openedBy(Runnable call) {
    AtomicReference<String> by = new AtomicReference<>();
    Consumer<Transport.Observed> before = Transport.observer;
    Transport.observer = o -> {
      before.accept(o);
      if (o.method().equals("POST") && o.path().equals("/v1/sessions")) {
        by.set(Json.parse(o.body()).path("opened_by").asText(null));
      }
    };
    try {
      call.run();
    } finally {
      Transport.observer = before;
    }
    return by.get();
  }

  @Test
  void lockOverHttps() throws Exception {
    TestServer server = tlsServer("server");
    int n = 0;
    for (String url : List.of(server.url(), "https://localhost:" + server.port())) { // an IP, a DNS name
      LeaseholdClient c = client(LeaseholdClient.builder().url(url).caFile(cert("ca.pem")));
      try (Session s = c.session("worker", Duration.ofSeconds(10));
          Watch w = c.watch("app"); // a stream over TLS too
          Lock lk = s.lock("app", "invoice:481", LockMode.EXCLUSIVE, Duration.ofSeconds(5))) {
        assertTrue(lk.fence() > 0);
        String key = "481-" + n++;
        c.put("app", key, "draft");
        assertEquals(2, c.save("app", key, "paid", lk.fence()));
        assertTrue(w.hasNext());
      }
    }
  }

  @Test
  void serverCertificatesThatDoNotVerifyAreRefused() throws Exception {
    for (var expected : List.of(List.of("server-other-ca", "PKIX path building failed"),
        List.of("server-expired", "validity"), List.of("server-wrong-host", "127.0.0.1"))) {
      String name = expected.get(0);
      // The expired one from a stand-in: leasehold serve refuses to start with it.
      String url = name.equals("server-expired") ? url(healthyDoor(name)) : tlsServer(name).url();
      LeaseholdClient c = client(LeaseholdClient.builder().url(url).caFile(cert("ca.pem")));
      UnreachableException e = assertTlsRefused(() -> c.session("worker", Duration.ofSeconds(10)));
      assertInstanceOf(SSLHandshakeException.class, e.getCause());
      assertTrue(e.getMessage().contains(expected.get(1)), e.getMessage());
      long start = System.nanoTime();
      assertFalse(c.healthy());
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(9), "healthy() waited for its deadline");
    }
    // Without a CA file the JDK's roots are used: they do not know the test CA.
    TestServer server = tlsServer("server");
    assertTlsRefused(() -> client(LeaseholdClient.builder().url(server.url())).session("w", Duration.ofSeconds(10)));
    // An https URL of a server that does not speak TLS.
    TestServer plain = closeLater(new TestServer());
    assertTlsRefused(() -> client(LeaseholdClient.builder().url("https://127.0.0.1:" + plain.port())
        .caFile(cert("ca.pem"))).session("w", Duration.ofSeconds(10)));
  }

  @Test
  void aHandshakeBrokenOffIsNotARefusal() throws Exception {
    ServerSocket closer = closeLater(new ServerSocket(0, 16, InetAddress.getLoopbackAddress()));
    Thread t = new Thread(() -> {
      while (true) {
        try (Socket s = closer.accept()) {
          s.getInputStream().read(new byte[4096]); // the ClientHello, then gone (a restart, say)
        } catch (IOException e) {
          return;
        }
      }
    });
    t.setDaemon(true);
    t.start();
    LeaseholdClient c = client(LeaseholdClient.builder().url("https://127.0.0.1:" + closer.getLocalPort())
        .caFile(cert("ca.pem")));
    UnreachableException e = assertThrows(UnreachableException.class, () -> c.session("w", Duration.ofSeconds(10)));
    assertEquals("unreachable", e.code(), e.getMessage());
  }

  @Test
  void mutualTls() throws Exception {
    TestServer server = mutualServer();
    LeaseholdClient c = client(LeaseholdClient.builder().url(server.url()).caFile(cert("ca.pem"))
        .clientCertificate(cert("client-billing.pem"), cert("client-billing.key")));
    assertEquals("billing", openedBy(() -> {
      try (Session s = c.session("worker", Duration.ofSeconds(10));
          Lock lk = s.lock("app", "r", LockMode.EXCLUSIVE, Duration.ofSeconds(1))) {
        assertTrue(lk.fence() > 0);
      }
    }));
    for (String name : new String[] {null, "client-other-ca", "client-expired"}) {
      LeaseholdClient.Builder b = LeaseholdClient.builder().url(server.url()).caFile(cert("ca.pem"));
      if (name != null) {
        b.clientCertificate(cert(name + ".pem"), cert(name + ".key"));
      }
      LeaseholdClient refused = client(b);
      UnreachableException e = assertTlsRefused(() -> refused.session("w", Duration.ofSeconds(10)));
      assertTrue(e.getMessage().contains("refused"), e.getMessage());
    }
    // A certificate of the CA whose subject no token names: authenticated, not authorized.
    LeaseholdClient unknown = client(LeaseholdClient.builder().url(server.url()).caFile(cert("ca.pem"))
        .clientCertificate(cert("client-unknown.pem"), cert("client-unknown.key")));
    LeaseholdException e = assertThrows(LeaseholdException.class, () -> unknown.session("w", Duration.ofSeconds(10)));
    assertEquals(401, e.status(), e.getMessage());
  }

  @Test
  void keysInPkcs8AndPkcs1AsWellAsSec1() throws Exception {
    Path pkcs8 = cert("client-billing.pk8");
    openssl("pkcs8", "-topk8", "-nocrypt", "-in", cert("client-billing.key").toString(), "-out", pkcs8.toString());
    PrivateKey sec1Key = Tls.privateKey(cert("client-billing.key"));
    PrivateKey pkcs8Key = Tls.privateKey(pkcs8);
    assertEquals(((ECPrivateKey) pkcs8Key).getS(), ((ECPrivateKey) sec1Key).getS());
    Path rsa1 = cert("rsa1.key");
    Path rsa8 = cert("rsa8.key");
    openssl("genrsa", "-traditional", "-out", rsa1.toString(), "2048");
    openssl("pkcs8", "-topk8", "-nocrypt", "-in", rsa1.toString(), "-out", rsa8.toString());
    // PKCS#1 (genrsa -traditional), not PKCS#8: its PEM label names RSA.
    assertTrue(Files.readString(rsa1).startsWith("-----BEGIN RSA "));
    assertEquals(Tls.privateKey(rsa8), Tls.privateKey(rsa1));

    TestServer server = mutualServer();
    LeaseholdClient c = client(LeaseholdClient.builder().url(server.url()).caFile(cert("ca.pem"))
        .clientCertificate(cert("client-billing.pem"), pkcs8));
    assertEquals("billing", openedBy(() -> c.session("pkcs8", Duration.ofSeconds(10)).close()));
  }

  private static void openssl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), "openssl: " + out);
  }

  @Test
  void badTlsOptionsAreRefusedWhenBuilt() throws Exception {
    var e = assertThrows(LeaseholdException.class, () -> LeaseholdClient.builder().url("https://127.0.0.1:1")
        .caFile(cert("missing.pem")).build());
    assertEquals("bad_tls", e.code());
    e = assertThrows(LeaseholdException.class, () -> LeaseholdClient.builder().url("https://127.0.0.1:1")
        .clientCertificate(cert("client-billing.pem"), null).build());
    assertEquals("bad_tls", e.code());
    e = assertThrows(LeaseholdException.class, () -> LeaseholdClient.builder().url("https://127.0.0.1:1")
        .sslContext(SSLContext.getDefault()).caFile(cert("ca.pem")).build());
    assertEquals("bad_tls", e.code());
  }

  /**
   * The conformance driver in a process of its own with {@code env}: its answers to {@code lines},
   * each sent once the one before is answered, given to {@code check} before its stdin closes (and
   * it ends what it opened).
   */
  private static void driver(Map<String, String> env, Consumer<List<JsonNode>> check, String... lines)
      throws Exception {
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", classpath, "io.leasehold.conformance.Driver");
    pb.environment().keySet().removeAll(List.of(Tls.ENV_CA_FILE, Tls.ENV_CERT, Tls.ENV_KEY));
    pb.environment().putAll(env);
    Process p = pb.redirectError(ProcessBuilder.Redirect.INHERIT).start();
    List<JsonNode> answers = new ArrayList<>();
    try (OutputStream in = p.getOutputStream();
        var out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line : lines) {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
        for (String got = out.readLine(); got != null; got = out.readLine()) {
          JsonNode doc = MAPPER.readTree(got);
          if (doc.has("id")) {
            answers.add(doc);
            break;
          }
        }
      }
      check.accept(answers);
    }
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
  }

  @Test
  void environmentVariablesThroughTheConformanceDriver() throws Exception {
    TestServer server = mutualServer();
    String client = "{\"id\":1,\"op\":\"client\",\"url\":\"" + server.url() + "\"}";
    String session = "{\"id\":2,\"op\":\"session\",\"as\":\"s\",\"name\":\"env\",\"ttl_ms\":10000}";
    // The session opened is billing's (read with an explicit certificate, an admin of every namespace).
    LeaseholdClient admin = client(LeaseholdClient.builder().url(server.url()).caFile(cert("ca.pem"))
        .clientCertificate(cert("client-billing.pem"), cert("client-billing.key")));
    driver(Map.of(Tls.ENV_CA_FILE, cert("ca.pem").toString(),
        Tls.ENV_CERT, cert("client-billing.pem").toString(), Tls.ENV_KEY, cert("client-billing.key").toString()),
        answers -> {
          String id = answers.get(1).path("ok").path("session").asText();
          assertFalse(id.isEmpty(), answers.toString());
          for (JsonNode s : admin.transport().call(Request.get("/v1/sessions")).json().path("sessions")) {
            if (s.path("id").asText().equals(id)) {
              assertEquals("billing", s.path("opened_by").asText(), s.toString());
              return;
            }
          }
          throw new AssertionError("session " + id + " is not listed");
        }, client, session);

    driver(Map.of(Tls.ENV_CA_FILE, cert("ca.pem").toString()), answers -> {
      JsonNode err = answers.get(1).path("error");
      assertEquals("unreachable", err.path("kind").asText(), answers.toString());
      assertEquals("tls", err.path("code").asText(), answers.toString());
    }, client, session);

    driver(Map.of(Tls.ENV_CERT, cert("client-billing.pem").toString()), answers ->
        assertEquals("bad_tls", answers.get(0).path("error").path("code").asText(), answers.toString()), client);
  }

  /** A server of this test on loopback answering every request with {@code handler}. */
  private HttpServer door(SSLContext tls, HttpHandlerFn handler) throws IOException {
    HttpServer s;
    if (tls != null) {
      HttpsServer https = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      https.setHttpsConfigurator(new HttpsConfigurator(tls));
      s = https;
    } else {
      s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    }
    s.createContext("/", x -> {
      try (x) {
        handler.handle(x);
      }
    });
    s.start();
    closeLater(() -> s.stop(0));
    return s;
  }

  /** An exchange's handler. */
  private interface HttpHandlerFn {
    void handle(HttpExchange x) throws IOException;
  }

  /** A TLS server of the test's with certificate {@code name} that answers as a healthy server. */
  private HttpServer healthyDoor(String name) throws IOException {
    return door(Tls.context(null, cert(name + ".pem"), cert(name + ".key")), x -> {
      byte[] ok = "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8);
      x.getResponseHeaders().set("Content-Type", "application/json");
      x.sendResponseHeaders(200, ok.length);
      x.getResponseBody().write(ok);
    });
  }

  private HttpServer redirector(SSLContext tls, String to) throws IOException {
    return door(tls, x -> {
      x.getResponseHeaders().set("Location", to + x.getRequestURI());
      x.sendResponseHeaders(307, -1);
    });
  }

  private static String url(HttpServer s) {
    return (s instanceof HttpsServer ? "https" : "http") + "://127.0.0.1:" + s.getAddress().getPort();
  }

  @Test
  void redirectsFromHttpsToHttpAreNotFollowed() throws Exception {
    TestServer tlsServer = tlsServer("server");
    TestServer plainServer = closeLater(new TestServer());
    SSLContext serverTls = Tls.context(null, cert("server.pem"), cert("server.key"));
    AtomicInteger plainAsked = new AtomicInteger();
    HttpServer plainDoor = door(null, x -> {
      plainAsked.incrementAndGet();
      x.sendResponseHeaders(418, -1);
    });

    HttpServer down = redirector(serverTls, url(plainDoor));
    LeaseholdClient c = client(LeaseholdClient.builder().url(url(down)).caFile(cert("ca.pem")));
    LeaseholdException e = assertThrows(LeaseholdException.class, () -> c.session("w", Duration.ofSeconds(10)));
    assertEquals("bad_url", e.code(), e.getMessage());
    assertEquals(307, e.status());
    assertTrue(e.getMessage().contains("https to http"), e.getMessage());
    assertEquals(0, plainAsked.get());

    // https to https, http to https and http to http: followed.
    for (HttpServer via : List.of(redirector(serverTls, tlsServer.url()), redirector(null, tlsServer.url()),
        redirector(null, plainServer.url()))) {
      LeaseholdClient followed = client(LeaseholdClient.builder().url(url(via)).caFile(cert("ca.pem")));
      followed.session("followed", Duration.ofSeconds(10)).close();
    }
  }
}
