package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;

/**
 * The leasehold client: immutable and thread-safe, built once and shared. It holds a pool of
 * keep-alive connections (java.net.http), a scheduler for renewals, and daemon worker threads.
 * Give it one node or a cluster's nodes, comma-separated; every call goes to the node it
 * believes leads (docs/client.md, "Clusters"). {@link #close()} ends the sessions it opened.
 *
 * <pre>{@code
 * try (var client = LeaseholdClient.create("http://127.0.0.1:7070");
 *      var s = client.session("worker", Duration.ofSeconds(10));
 *      var lk = s.lock("app", "invoice:481", LockMode.EXCLUSIVE, Duration.ofSeconds(5))) {
 *   write(lk.fence());
 * }
 * }</pre>
 */
public final class LeaseholdClient implements AutoCloseable {
  /** The default deadline of a call (a lock wait adds its own timeout). */
  public static final Duration DEFAULT_IO_TIMEOUT = Duration.ofSeconds(30);

  private final Transport transport;
  private final ScheduledExecutorService scheduler;
  private final ExecutorService workers;
  private final Map<Session, Boolean> sessions = new ConcurrentHashMap<>();

  private LeaseholdClient(Builder b) {
    List<String> urls = Nodes.parse(b.url == null ? "" : b.url);
    this.transport = new Transport(urls, b.token, b.ioTimeout, b.tls());
    this.scheduler = Executors.newSingleThreadScheduledExecutor(daemons("leasehold-timer"));
    this.workers = Executors.newCachedThreadPool(daemons("leasehold-worker"));
  }

  /** A client of {@code url} (one node, or several comma-separated) with the default options. */
  public static LeaseholdClient create(String url) {
    return builder().url(url).build();
  }

  /** A builder of a client's options. */
  public static Builder builder() {
    return new Builder();
  }

  /** A client's options. Not thread-safe; {@link #build()} copies them. */
  public static final class Builder {
    private String url;
    private String token;
    private Duration ioTimeout = DEFAULT_IO_TIMEOUT;
    private Path caFile;
    private Path certFile;
    private Path keyFile;
    private SSLContext sslContext;

    private Builder() {}

    /**
     * One node's URL, or a cluster's, comma-separated, in any order: {@code http://} or
     * {@code https://} (port 443 by default).
     */
    public Builder url(String url) {
      this.url = url;
      return this;
    }

    /** The bearer token sent with every request (null: none). */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** The deadline of a call (default 30 s); a lock wait adds its own timeout. */
    public Builder ioTimeout(Duration ioTimeout) {
      this.ioTimeout = ioTimeout;
      return this;
    }

    /**
     * The PEM file of the certificates the servers' certificates are verified against, instead of
     * the JDK's roots (null: env {@code LEASEHOLD_CA_FILE}, else the JDK's roots). Host names are
     * always verified too.
     */
    public Builder caFile(Path caFile) {
      this.caFile = caFile;
      return this;
    }

    /**
     * The client certificate presented to servers that ask for one (mutual TLS): {@code certFile}
     * PEM, the leaf first (it may hold its chain); {@code keyFile} PEM, unencrypted PKCS#8
     * ({@code PRIVATE KEY}), SEC1 ({@code EC PRIVATE KEY}) or PKCS#1 ({@code RSA PRIVATE KEY}).
     * Null: env {@code LEASEHOLD_CERT} and {@code LEASEHOLD_KEY}, else none.
     */
    public Builder clientCertificate(Path certFile, Path keyFile) {
      this.certFile = certFile;
      this.keyFile = keyFile;
      return this;
    }

    /**
     * The TLS context to use as it is (a key store of your own, say), instead of {@link #caFile}
     * and {@link #clientCertificate} and the environment; its trust managers must verify the
     * servers' certificates. Host names are verified whatever the context.
     */
    public Builder sslContext(SSLContext sslContext) {
      this.sslContext = sslContext;
      return this;
    }

    /**
     * The client; {@link LeaseholdException} {@code bad_url} when a URL is not http(s),
     * {@code bad_tls} when a TLS file cannot be read or used (they are read here, once).
     */
    public LeaseholdClient build() {
      return new LeaseholdClient(this);
    }

    /** The TLS context of these options and the environment; null: the JDK's default. */
    private SSLContext tls() {
      if (sslContext != null) {
        if (caFile != null || certFile != null || keyFile != null) {
          throw Tls.bad("sslContext excludes caFile and clientCertificate");
        }
        return sslContext;
      }
      Path ca = caFile != null ? caFile : env(Tls.ENV_CA_FILE);
      Path cert = certFile;
      Path key = keyFile;
      if (cert == null && key == null) {
        cert = env(Tls.ENV_CERT);
        key = env(Tls.ENV_KEY);
      }
      if ((cert == null) != (key == null)) {
        throw Tls.bad("a client certificate needs both a certificate file and a key file (got "
            + cert + " and " + key + ")");
      }
      return ca == null && cert == null ? null : Tls.context(ca, cert, key);
    }

    private static Path env(String name) {
      String v = System.getenv(name);
      return v == null || v.isEmpty() ? null : Path.of(v);
    }
  }

  private static ThreadFactory daemons(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  Transport transport() {
    return transport;
  }

  ExecutorService workers() {
    return workers;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  Periodic every(long periodMs, Runnable task) {
    return new Periodic(scheduler, workers, periodMs, task);
  }

  void forget(Session s) {
    sessions.remove(s);
  }

  private static String recordPath(String ns, String key) {
    return "/v1/records/" + Json.seg(ns) + "/" + Json.seg(key);
  }

  private static JsonNode expect(Answer a, int... ok) {
    JsonNode doc = a.json();
    for (int s : ok) {
      if (a.status() == s) {
        return doc;
      }
    }
    throw Errors.fromAnswer(a.status(), doc);
  }

  /**
   * Opens a session named {@code name} that keeps itself alive (a keepalive every ttl/3).
   * Throws {@link UnreachableException} (a POST that may have reached the server is never
   * sent twice) or another {@link LeaseholdException}.
   */
  public Session session(String name, Duration ttl) {
    ObjectNode doc = Json.object().put("ttl_ms", ttl.toMillis()).put("deadlock_priority", 0);
    if (name != null) {
      doc.put("name", name);
    }
    JsonNode s = expect(transport.call(Request.write("POST", "/v1/sessions", Json.bytes(doc))), 201, 200);
    Session session = new Session(this, s.path("id").asText(), name, ttl);
    sessions.put(session, Boolean.TRUE);
    return session;
  }

  /**
   * Checks out {@code key} for {@code owner} for {@code ttl}, renewed every ttl/3 until checked
   * in or lost. Throws {@link LockedException} when someone else holds it.
   */
  public Checkout checkout(String ns, String key, String owner, Duration ttl) {
    String token = UUID.randomUUID().toString().replace("-", "");
    return new Checkout(this, ns, key, owner, ttl, token, granted(ns, key, owner, ttl, token));
  }

  /**
   * Checks out {@code key} for {@code ttl} once, without renewal (the lease runs out unless
   * renewed). Throws {@link LockedException} when someone else holds it.
   */
  public Lease lease(String ns, String key, String owner, Duration ttl) {
    String token = UUID.randomUUID().toString().replace("-", "");
    JsonNode doc = granted(ns, key, owner, ttl, token);
    return new Lease(ns, key, owner, token, doc.path("fence").asLong(0));
  }

  /** A checkout with its own token, granted (its answer) or refused (LockedException, …). */
  private JsonNode granted(String ns, String key, String owner, Duration ttl, String token) {
    Answer a = transport.call(Checkout.request(ns, key, owner, ttl, token));
    JsonNode doc = a.json();
    if (a.status() == 423) {
      throw new LockedException("held by " + Json.text(doc, "locked_by"), 423, Json.text(doc, "locked_by"));
    }
    if (a.status() != 200) {
      throw Errors.fromAnswer(a.status(), doc);
    }
    return doc;
  }

  /**
   * Renews {@code lease} to run out {@code ttl} from now (longer or shorter). False when it was
   * lost: someone else holds the key, or it had run out (the new lease this made is checked in).
   */
  public boolean renew(Lease lease, Duration ttl) {
    Answer a = transport.call(Checkout.request(lease.ns(), lease.key(), lease.owner(), ttl, lease.token()));
    if (a.status() == 423) {
      return false;
    }
    JsonNode doc = expect(a, 200);
    if (doc.path("renewed").asBoolean(false)) {
      return true;
    }
    if (doc.path("granted").asBoolean(false)) {
      checkin(lease);
    }
    return false;
  }

  /** Checks {@code lease} in; a lease no longer ours ({@code not_owner}, {@code expired}) changes nothing. */
  public void checkin(Lease lease) {
    ObjectNode doc = Json.object().put("token", lease.token());
    Answer a = transport.call(Request.write("POST", recordPath(lease.ns(), lease.key()) + "/checkin",
        Json.bytes(doc)));
    if (a.status() != 200) {
      LeaseholdException e = Errors.writeRefusal(a.status(), a.json(), "released");
      if (!e.code().equals("not_owner") && !e.code().equals("expired")) {
        throw e;
      }
    }
  }

  /**
   * Creates a record ({@code PUT}); answers its version. {@code exists} when it exists already.
   */
  public long put(String ns, String key, String body) {
    ObjectNode doc = Json.object().put("body", body);
    return expect(transport.call(Request.write("PUT", recordPath(ns, key), Json.bytes(doc))), 201, 202)
        .path("version").asLong();
  }

  /** Reads a record; {@code not_found} when there is none. */
  public RecordValue get(String ns, String key) {
    return RecordValue.of(expect(transport.call(Request.get(recordPath(ns, key))), 200));
  }

  /**
   * A fenced write: saves {@code body} with a lock's {@code fence}; answers the new version.
   * Throws {@link StaleFenceException} once a newer fence wrote the record.
   */
  public long save(String ns, String key, String body, long fence) {
    return saveWith(ns, key, body, Json.object().put("fence", fence));
  }

  long saveWith(String ns, String key, String body, ObjectNode proof) {
    proof.put("body", body);
    Answer a = transport.call(Request.write("POST", recordPath(ns, key) + "/save", Json.bytes(proof)));
    JsonNode doc = a.json();
    if (a.status() != 200 && a.status() != 202) {
      throw Errors.writeRefusal(a.status(), doc, "saved");
    }
    return doc.path("version").asLong();
  }

  /**
   * Enqueues an outbox message at once, outside any transaction (sent once); {@code payload}
   * is anything Jackson encodes. A key enqueued before is not enqueued again
   * ({@link Enqueued#duplicate()}, with the existing message's id).
   */
  public Enqueued enqueue(String ns, String topic, String key, Object payload) {
    return enqueue(ns, topic, key, payload, null);
  }

  Enqueued enqueue(String ns, String topic, String key, Object payload, String session) {
    ObjectNode doc = Json.object().put("key", key);
    doc.set("payload", Json.value(payload));
    if (session != null) {
      doc.put("session", session);
    }
    String path = "/v1/outbox/" + Json.seg(ns) + "/" + Json.seg(topic);
    return Enqueued.of(expect(transport.call(Request.write("POST", path, Json.bytes(doc))), 201, 200));
  }

  /**
   * Leases up to {@code max} (1..1000) pending messages of {@code topic} to {@code consumer}
   * for {@code lease}, under one claim token; answers them oldest first (maybe none). Sent once:
   * a break is {@link UnreachableException} (the messages come back when the lease runs out).
   * Perform each effect idempotently (by its key), then {@link #ack} it.
   */
  public List<Message> claim(String ns, String topic, String consumer, int max, Duration lease) {
    ObjectNode doc = Json.object().put("consumer", consumer).put("max", max).put("lease_ms", lease.toMillis());
    String path = "/v1/outbox/" + Json.seg(ns) + "/" + Json.seg(topic) + "/claim";
    JsonNode answer = expect(transport.call(Request.write("POST", path, Json.bytes(doc))), 200);
    List<Message> messages = new ArrayList<>();
    for (JsonNode m : answer.path("messages")) {
      messages.add(Message.of(m));
    }
    return messages;
  }

  /**
   * Acks a claimed message once its effect is done. A repeated ack is harmless (and is sent
   * again after a break). Throws {@link LostException} (code {@code not_owner} or
   * {@code expired}) when the claim ran out or the message was claimed again, code
   * {@code not_found} for an unknown id.
   */
  public void ack(String ns, String topic, Message message) {
    ObjectNode doc = Json.object().put("id", message.id()).put("claim_token", message.claimToken());
    String path = "/v1/outbox/" + Json.seg(ns) + "/" + Json.seg(topic) + "/ack";
    Answer a = transport.call(new Request("POST", path, Json.bytes(doc), Request.Retry.IDEMPOTENT, 0));
    if (a.status() == 200) {
      return;
    }
    JsonNode answer = a.json();
    if (a.status() == 423) {
      String reason = answer.path("reason").asText("");
      if (reason.isEmpty()) {
        JsonNode err = answer.path("error");
        reason = err.path("code").asText("not_owner");
      }
      throw new LostException(reason, "the claim is no longer ours (" + reason + ")", 423);
    }
    throw Errors.fromAnswer(a.status(), answer);
  }

  /**
   * Watches the events of {@code ns} (null: all) on a stream of its own, opened at the leader.
   * Events that happen before the stream is open may be missed.
   */
  public Watch watch(String ns) {
    String path = ns == null ? "/v1/events" : "/v1/events?ns=" + Json.seg(ns);
    Answer a = transport.call(Request.get(path), -1, true);
    if (a.status() != 200) {
      throw Errors.fromAnswer(a.status(), a.json());
    }
    return new Watch(this, a.stream());
  }

  /**
   * True when a node answers /healthz (it leads) within the io timeout; false at once when every
   * node refused the TLS handshake.
   */
  public boolean healthy() {
    return transport.awaitHealthy(System.nanoTime() + transport.ioTimeout.toNanos()) == null;
  }

  /** Ends the sessions this client opened (best effort) and stops its threads. */
  @Override
  public void close() {
    for (Session s : List.copyOf(sessions.keySet())) {
      s.close();
    }
    scheduler.shutdownNow();
    workers.shutdown();
  }
}
