package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The open transaction of a session (docs/api.md, "Transactions"): locks it owns, staged
 * record writes, operation records and outbox messages, all applied at once by
 * {@link #commit()} or none of them. Reads never see staged writes.
 *
 * <p>Every call is sent once: a connection that broke after the request was sent is
 * {@link UnreachableException} (it may or may not have been done; after a commit read the
 * operation or the records to know, never send it again). {@link TransactionAbortedException}
 * ({@code transaction_aborted}, {@code transaction_expired}, {@code transaction_lost}) means
 * nothing was applied and the transaction is over. After {@link #commit()} or
 * {@link #rollback()} (or such an error) the handle refuses further calls with code
 * {@code no_transaction}. Commit is explicit: {@link #close()} rolls back a transaction that was
 * not committed, so try-with-resources ends it on every other path.
 *
 * <pre>{@code
 * try (Transaction tx = session.transaction()) {
 *   TransactionLock lk = tx.lock("billing", "invoice:481", LockMode.EXCLUSIVE, Duration.ofSeconds(5));
 *   if (!tx.beginOperation("billing", "finalize:481").completed()) {
 *     tx.save("billing", "481", "final", Proof.fence(lk.fence()));
 *     tx.completeOperation("billing", "finalize:481", Map.of("total", 120));
 *     tx.commit();
 *   }
 * }
 * }</pre>
 *
 * <p>Thread-safe, but its calls are meant to be made one after another.
 */
public final class Transaction implements AutoCloseable {
  private final Session session;
  private final long number;
  private final String deadline;
  private boolean finished;

  Transaction(Session session, JsonNode doc) {
    this.session = session;
    this.number = doc.path("transaction").asLong();
    this.deadline = Json.text(doc, "deadline");
  }

  /** The server's transaction number. */
  public long number() {
    return number;
  }

  /** When {@code max_transaction_ms} rolls it back (ISO 8601), or null when unbounded. */
  public String deadline() {
    return deadline;
  }

  /** The session whose transaction it is. */
  public Session session() {
    return session;
  }

  /** True once it was committed, rolled back or aborted: further calls are refused. */
  public synchronized boolean finished() {
    return finished;
  }

  /** Checks the handle is still open; {@code last} (commit, rollback) ends it whatever the answer. */
  private synchronized void start(boolean last) {
    if (finished) {
      throw new LeaseholdException("no_transaction", "transaction " + number + " is over", 0);
    }
    if (last) {
      finished = true;
    }
  }

  private synchronized void finish() {
    finished = true;
  }

  /** Sends {@code req} once (never again) and answers its answer, noting what errors say. */
  private Answer send(Request req, boolean last) {
    start(last);
    try {
      return session.transport().call(req);
    } catch (LeaseholdException e) {
      throw note(e);
    }
  }

  /** Notes what {@code e} says about the transaction and the session; answers it. */
  private LeaseholdException note(LeaseholdException e) {
    if (e instanceof TransactionAbortedException || e instanceof SessionLostException) {
      finish();
    }
    if (e instanceof SessionLostException) {
      session.noticeLoss();
    }
    return e;
  }

  private JsonNode expect(Request req, boolean last, int... ok) {
    Answer a = send(req, last);
    JsonNode doc = a.json();
    for (int s : ok) {
      if (a.status() == s) {
        return doc;
      }
    }
    throw note(Errors.fromAnswer(a.status(), doc));
  }

  private ObjectNode withSession(ObjectNode doc) {
    return doc.put("session", session.id());
  }

  private static String recordPath(String ns, String key) {
    return "/v1/records/" + Json.seg(ns) + "/" + Json.seg(key);
  }

  private String transactionPath(String action) {
    return "/v1/sessions/" + Json.seg(session.id()) + "/transaction/" + action;
  }

  /**
   * Takes an exclusive lock owned by the transaction, waiting without limit.
   *
   * @see #lock(String, String, LockMode, Duration)
   */
  public TransactionLock lock(String ns, String resource) {
    return lock(ns, resource, LockMode.EXCLUSIVE, null);
  }

  /**
   * Takes the application lock {@code resource} of {@code ns} in {@code mode}, owned by the
   * transaction (commit and rollback release it), waiting up to {@code timeout} (null or
   * negative: without limit; zero: no wait). Unlike {@link Session#lock} a broken wait is not
   * ridden through (a restart loses the transaction): it is {@link UnreachableException}.
   * Throws {@link LockTimeoutException}, {@link DeadlockException}, {@link CancelledException},
   * {@link TransactionAbortedException}, {@link UnreachableException} or another
   * {@link LeaseholdException}.
   */
  public TransactionLock lock(String ns, String resource, LockMode mode, Duration timeout) {
    return lock(ns, resource, mode, timeout, Session.DEFAULT_PRINCIPAL);
  }

  /** As {@link #lock(String, String, LockMode, Duration)}, for {@code principal}. */
  public TransactionLock lock(String ns, String resource, LockMode mode, Duration timeout, String principal) {
    long timeoutMs = Json.ms(timeout);
    ObjectNode doc = withSession(Json.object()).put("resource", resource).put("mode", mode.wire())
        .put("owner", "Transaction").put("timeout_ms", timeoutMs).put("principal", principal);
    Request req = new Request("POST", "/v1/applocks/" + Json.seg(ns) + "/acquire", Json.bytes(doc),
        Request.Retry.LOCK, timeoutMs);
    Answer a;
    try {
      a = send(req, false);
    } catch (Transport.WaitBroken e) {
      throw Transport.unreachable("the wait broke; the lock may or may not be held");
    }
    try {
      Grant g = Grant.of(a.status(), a.json());
      return new TransactionLock(ns, resource, g.fence(), g.mode(), Math.max(g.count(), 1), g.waited());
    } catch (LeaseholdException e) {
      throw note(e);
    }
  }

  /**
   * Looks the idempotent operation {@code opId} of {@code ns} up in the committed state: new,
   * or completed with its stored outcome (then do nothing again).
   */
  public Operation beginOperation(String ns, String opId) {
    String path = "/v1/operations/" + Json.seg(ns) + "/" + Json.seg(opId) + "/begin";
    return Operation.of(expect(Request.write("POST", path, Json.bytes(withSession(Json.object()))), false, 200));
  }

  /**
   * Stages the completion of {@code opId} with {@code outcome} (anything Jackson encodes; a
   * {@link JsonNode} as it is), stored at commit. Code {@code exists} when it is completed
   * already (or earlier in this transaction); another transaction completing it first aborts
   * this one's commit.
   */
  public void completeOperation(String ns, String opId, Object outcome) {
    String path = "/v1/operations/" + Json.seg(ns) + "/" + Json.seg(opId) + "/complete";
    ObjectNode doc = withSession(Json.object());
    doc.set("outcome", Json.value(outcome));
    expect(Request.write("POST", path, Json.bytes(doc)), false, 200);
  }

  /**
   * Stages an outbox message ({@code payload}: anything Jackson encodes), enqueued at commit. A
   * key enqueued before is not enqueued again ({@link Enqueued#duplicate()}, here or in the
   * commit's {@link Applied}).
   */
  public Enqueued enqueue(String ns, String topic, String key, Object payload) {
    start(false);
    try {
      return session.client().enqueue(ns, topic, key, payload, session.id());
    } catch (LeaseholdException e) {
      throw note(e);
    }
  }

  /**
   * Stages the creation of a record (checked now and again at commit, as
   * {@link LeaseholdClient#put}); its version is in the commit's {@link Applied}.
   */
  public void put(String ns, String key, String body) {
    put(ns, key, body, Proof.NONE);
  }

  /** As {@link #put(String, String, String)}, with a fence ({@link Proof#fence(long)}). */
  public void put(String ns, String key, String body, Proof proof) {
    ObjectNode doc = withSession(Proof.fence(proof.fence()).doc()).put("body", body);
    expect(Request.write("PUT", recordPath(ns, key), Json.bytes(doc)), false, 201, 202);
  }

  /**
   * Stages a save of {@code body} with its proof (a refusal throws now; one that no longer holds
   * at commit aborts the commit). Throws {@link StaleFenceException} or a
   * {@link LeaseholdException} whose code is the refusal's reason ({@code not_owner},
   * {@code version_mismatch}, ...).
   */
  public void save(String ns, String key, String body, Proof proof) {
    ObjectNode doc = withSession(proof.doc()).put("body", body);
    write(Request.write("POST", recordPath(ns, key) + "/save", Json.bytes(doc)), "saved");
  }

  /** Stages the deletion of a record with its proof, as {@link #save}. */
  public void delete(String ns, String key, Proof proof) {
    ObjectNode doc = withSession(proof.doc());
    write(Request.write("DELETE", recordPath(ns, key), Json.bytes(doc)), "deleted");
  }

  private void write(Request req, String flag) {
    Answer a = send(req, false);
    if (a.status() != 200 && a.status() != 202) {
      throw note(Errors.writeRefusal(a.status(), a.json(), flag));
    }
  }

  /**
   * Applies every staged write at once and releases the transaction's locks; answers what was
   * applied, in the order staged. {@link TransactionAbortedException}: a staged write no longer
   * held (nothing applied); {@link UnreachableException}: the answer was lost (it may have
   * committed: read the operation or the records to know). The handle is over either way.
   */
  public List<Applied> commit() {
    JsonNode doc = expect(Request.write("POST", transactionPath("commit"), null), true, 200);
    List<Applied> applied = new ArrayList<>();
    for (JsonNode a : doc.path("applied")) {
      applied.add(Applied.of(a));
    }
    return applied;
  }

  /**
   * Drops every staged write and releases the transaction's locks. After a commit, a rollback or
   * an abort it does nothing; a transaction the server no longer has is rolled back already.
   */
  public void rollback() {
    synchronized (this) {
      if (finished) {
        return;
      }
      finished = true;
    }
    try {
      Answer a = session.transport().call(Request.write("POST", transactionPath("rollback"), null));
      if (a.status() != 200) {
        throw note(Errors.fromAnswer(a.status(), a.json()));
      }
    } catch (TransactionAbortedException e) {
      return; // there is no transaction any more: nothing to roll back
    } catch (LeaseholdException e) {
      if (!"no_transaction".equals(e.code())) {
        throw note(e);
      }
    }
  }

  /**
   * Rolls the transaction back unless it was committed (or is over); errors are those of
   * {@link #rollback()} (added as suppressed to an exception leaving a try-with-resources).
   */
  @Override
  public void close() {
    rollback();
  }
}
