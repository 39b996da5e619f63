package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A session that keeps itself alive: a keepalive every ttl/3 on the client's threads, each
 * giving up after ttl/6 (at least 1 s); network failures are retried at the next period. A
 * keepalive answered {@code session_not_found} makes it lost: {@link #lost()} completes once, and
 * so does every lock and slot taken through it. Thread-safe; {@link #close()} ends it.
 */
public final class Session implements AutoCloseable {
  /** The principal locks are taken for unless one is given. */
  public static final String DEFAULT_PRINCIPAL = "public";

  private final LeaseholdClient client;
  private final String id;
  private final String name;
  private final Duration ttl;
  private final CompletableFuture<Void> lost = new CompletableFuture<>();
  private final CompletableFuture<Void> locksLost = new CompletableFuture<>();
  private final Map<Held, Boolean> held = new ConcurrentHashMap<>();
  private final AtomicBoolean ended = new AtomicBoolean();
  private final Periodic keepalive;

  Session(LeaseholdClient client, String id, String name, Duration ttl) {
    this.client = client;
    this.id = id;
    this.name = name;
    this.ttl = ttl;
    this.keepalive = client.every(Math.max(1, ttl.toMillis() / 3), this::keepaliveOnce);
  }

  /** The server's id of the session. */
  public String id() {
    return id;
  }

  /** The session's name. */
  public String name() {
    return name;
  }

  /** Its time to live. */
  public Duration ttl() {
    return ttl;
  }

  /** Completed once when the session is lost (never by {@link #close()}). */
  public CompletableFuture<Void> lost() {
    return lost;
  }

  /**
   * Completed once when a restart took the session's locks in a {@code "locks":"memory"}
   * namespace: treat every lock taken there as lost.
   */
  public CompletableFuture<Void> locksLost() {
    return locksLost;
  }

  /** True once the session was lost. */
  public boolean isLost() {
    return lost.isDone();
  }

  LeaseholdClient client() {
    return client;
  }

  /**
   * Begins the session's transaction (at most one is open): close it, or {@link
   * Transaction#commit()} it. Throws {@link LeaseholdException} {@code transaction_open},
   * {@link SessionLostException} or {@link UnreachableException}.
   */
  public Transaction transaction() {
    checkUsable();
    Answer a = run(() -> transport().call(Request.write("POST", "/v1/sessions/" + Json.seg(id) + "/transaction",
        null)));
    JsonNode doc = a.json();
    if (a.status() != 201) {
      LeaseholdException e = Errors.fromAnswer(a.status(), doc);
      if (e instanceof SessionLostException) {
        noticeLoss();
      }
      throw e;
    }
    return new Transaction(this, doc);
  }

  Transport transport() {
    return client.transport();
  }

  /**
   * Takes an exclusive lock on {@code resource}, waiting without limit.
   *
   * @see #lock(String, String, LockMode, Duration)
   */
  public Lock lock(String ns, String resource) {
    return lock(ns, resource, LockMode.EXCLUSIVE, null);
  }

  /**
   * Takes a lock for the session, waiting up to {@code timeout} (null or negative: without
   * limit; zero: no wait). A wait broken by a restart or failover is ridden through when no
   * handle of this session holds the lock already. Throws {@link LockTimeoutException},
   * {@link DeadlockException}, {@link CancelledException}, {@link SessionLostException},
   * {@link UnreachableException} or another {@link LeaseholdException}.
   */
  public Lock lock(String ns, String resource, LockMode mode, Duration timeout) {
    return lock(ns, resource, mode, timeout, DEFAULT_PRINCIPAL);
  }

  /** As {@link #lock(String, String, LockMode, Duration)}, for {@code principal}. */
  public Lock lock(String ns, String resource, LockMode mode, Duration timeout, String principal) {
    checkUsable();
    String key = Lock.lockKey(ns, principal, resource);
    var target = new Acquirer.Target(ns, id, resource, principal, mode.wire(), 0, 0);
    Grant g = run(() -> new Acquirer(transport()).acquire(target, timeout, holds(key)));
    return keep(new Lock(this, ns, principal, resource, key, g));
  }

  /** {@link #lock(String, String, LockMode, Duration)} on a client thread. */
  public CompletableFuture<Lock> lockAsync(String ns, String resource, LockMode mode, Duration timeout) {
    return CompletableFuture.supplyAsync(() -> lock(ns, resource, mode, timeout), client.workers());
  }

  /**
   * Takes {@code permits} of semaphore {@code name} (at most {@code limit} shared by all
   * holders), waiting up to {@code timeout} as {@link #lock(String, String, LockMode, Duration)}.
   */
  public SemaphoreSlot semaphore(String ns, String name, int limit, int permits, Duration timeout) {
    checkUsable();
    String key = SemaphoreSlot.semaphoreKey(ns, DEFAULT_PRINCIPAL, name);
    var target = new Acquirer.Target(ns, id, name, DEFAULT_PRINCIPAL, null, limit, permits);
    Grant g = run(() -> new Acquirer(transport()).acquire(target, timeout, holds(key)));
    return keep(new SemaphoreSlot(this, ns, DEFAULT_PRINCIPAL, name, limit, permits, g));
  }

  /** {@link #semaphore(String, String, int, int, Duration)} on a client thread. */
  public CompletableFuture<SemaphoreSlot> semaphoreAsync(String ns, String name, int limit, int permits,
      Duration timeout) {
    return CompletableFuture.supplyAsync(() -> semaphore(ns, name, limit, permits, timeout), client.workers());
  }

  private <T> T run(java.util.function.Supplier<T> call) {
    try {
      return call.get();
    } catch (SessionLostException e) {
      noticeLoss();
      throw e;
    }
  }

  private boolean holds(String key) {
    for (Held h : held.keySet()) {
      if (h.key.equals(key)) {
        return true;
      }
    }
    return false;
  }

  private <H extends Held> H keep(H h) {
    held.put(h, Boolean.TRUE);
    if (lost.isDone()) {
      h.markLost();
    }
    return h;
  }

  void forget(Held h) {
    held.remove(h);
  }

  private void checkUsable() {
    if (lost.isDone()) {
      throw new SessionLostException("session_not_found", "session " + id + " was lost", 0);
    }
    if (ended.get()) {
      throw new SessionLostException("session_not_found", "session " + id + " was ended", 0);
    }
  }

  /** Marks the session (and all it holds) lost, once. */
  void noticeLoss() {
    if (ended.get() || !lost.complete(null)) {
      return;
    }
    keepalive.cancel();
    for (Held h : List.copyOf(held.keySet())) {
      h.markLost();
    }
  }

  private void keepaliveOnce() {
    if (ended.get() || lost.isDone()) {
      return;
    }
    long giveUp = Math.max(ttl.toMillis() / 6, 1000);
    Request req = new Request("POST", "/v1/sessions/" + Json.seg(id) + "/keepalive", null,
        Request.Retry.IDEMPOTENT, 0);
    JsonNode doc;
    try {
      Answer a = transport().call(req, giveUp, false);
      doc = a.json();
      if (a.status() != 200) {
        if (Errors.fromAnswer(a.status(), doc) instanceof SessionLostException) {
          noticeLoss();
        }
        return;
      }
    } catch (LeaseholdException e) {
      return; // a network failure: retried at the next period
    }
    if (doc.path("locks_lost").asBoolean(false) && !ended.get()) {
      locksLost.complete(null);
    }
    for (JsonNode taken : doc.path("lost")) {
      takenBack(taken);
    }
  }

  /**
   * The server took a name back from the session (a hold limit, a break): its handles are lost
   * and no longer held, so their release sends nothing (the session may hold the name again
   * through another handle). Transaction-owned losses are the caller's to read.
   */
  private void takenBack(JsonNode taken) {
    if (!"Session".equals(taken.path("owner").asText())) {
      return;
    }
    String ns = taken.path("ns").asText();
    String principal = taken.path("principal").asText();
    String name = taken.path("resource").asText();
    String key = "semaphore".equals(taken.path("kind").asText())
        ? SemaphoreSlot.semaphoreKey(ns, principal, name)
        : Lock.lockKey(ns, principal, name);
    for (Held h : List.copyOf(held.keySet())) {
      if (h.key.equals(key)) {
        held.remove(h);
        h.markLost();
      }
    }
  }

  /**
   * Ends the session on the server (its locks are released). Throws {@link SessionLostException}
   * when it was gone already; a second call does nothing.
   */
  public void end() {
    if (!ended.compareAndSet(false, true)) {
      return;
    }
    keepalive.cancel();
    client.forget(this);
    Answer a = transport().call(Request.write("DELETE", "/v1/sessions/" + Json.seg(id), null));
    if (a.status() != 204 && a.status() != 200) {
      throw Errors.fromAnswer(a.status(), a.json());
    }
  }

  /** Ends the session, best effort (errors ignored). */
  @Override
  public void close() {
    try {
      end();
    } catch (LeaseholdException ignored) {
      // best effort, as documented
    }
  }
}
