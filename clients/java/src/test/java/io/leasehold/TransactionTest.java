package io.leasehold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Transactions, operation records and the outbox against a real server (answers validated). */
class TransactionTest extends ServerTestBase {
  /** The README's walkthrough: answers the outcome, and whether this call did the work. */
  private static boolean finalize(Session s, String invoice, List<JsonNode> outcomes) {
    try (Transaction tx = s.transaction()) {
      TransactionLock lk = tx.lock("billing", "invoice:" + invoice, LockMode.EXCLUSIVE, Duration.ofSeconds(20));
      Operation op = tx.beginOperation("billing", "finalize:" + invoice);
      if (op.completed()) {
        synchronized (outcomes) {
          outcomes.add(op.outcome());
        }
        return false;
      }
      tx.save("billing", invoice, "final", Proof.fence(lk.fence()));
      tx.completeOperation("billing", "finalize:" + invoice, Map.of("total", 120, "by", s.name()));
      Enqueued e = tx.enqueue("billing", "emails", "invoice-final:" + invoice, Map.of("invoice", invoice));
      assertTrue(e.staged());
      List<Applied> applied = tx.commit();
      assertEquals(List.of("save", "complete", "enqueue"), applied.stream().map(Applied::op).toList());
      assertEquals(2, applied.get(0).version());
      assertEquals("emails", applied.get(2).topic());
      assertTrue(applied.get(2).id() > 0);
      assertFalse(applied.get(2).duplicate());
      return true;
    }
  }

  @Test
  void anInvoiceIsFinalizedExactlyOnceByRacingWorkers() throws Exception {
    client.put("billing", "481", "draft");
    int workers = 4;
    List<JsonNode> outcomes = new ArrayList<>();
    AtomicInteger done = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    try {
      List<Callable<Void>> tasks = new ArrayList<>();
      for (int i = 0; i < workers; i++) {
        String name = "worker-" + i;
        tasks.add(() -> {
          try (Session s = client.session(name, Duration.ofSeconds(10))) {
            for (int attempt = 0; attempt < 3; attempt++) { // retries find it done
              if (finalize(s, "481", outcomes)) {
                done.incrementAndGet();
              }
            }
          }
          return null;
        });
      }
      for (Future<Void> f : pool.invokeAll(tasks)) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, done.get(), "finalized once");
    assertEquals(workers * 3 - 1, outcomes.size());
    String by = outcomes.get(0).path("by").asText();
    for (JsonNode o : outcomes) {
      assertEquals(120, o.path("total").asInt());
      assertEquals(by, o.path("by").asText()); // every retry sees the one stored outcome
    }
    RecordValue inv = client.get("billing", "481");
    assertEquals("final", inv.body());
    assertEquals(2, inv.version());

    List<Message> msgs = client.claim("billing", "emails", "mailer", 10, Duration.ofSeconds(30));
    assertEquals(1, msgs.size(), "one message");
    Message m = msgs.get(0);
    assertEquals("invoice-final:481", m.key());
    assertEquals("481", m.payload().path("invoice").asText());
    assertEquals(1, m.attempt());
    client.ack("billing", "emails", m);
    assertEquals(List.of(), client.claim("billing", "emails", "mailer", 10, Duration.ofSeconds(30)));
  }

  @Test
  void closeWithoutCommitRollsBack() {
    try (Session a = client.session("a", Duration.ofSeconds(10));
        Session b = client.session("b", Duration.ofSeconds(10))) {
      Transaction kept;
      try (Transaction tx = a.transaction()) {
        kept = tx;
        assertTrue(tx.number() > 0);
        TransactionLock lk = tx.lock("billing", "invoice:7", LockMode.EXCLUSIVE, Duration.ZERO);
        assertTrue(lk.fence() > 0);
        assertEquals("Exclusive", lk.mode());
        tx.put("billing", "7", "draft");
        assertEquals("transaction_open", assertThrows(LeaseholdException.class, a::transaction).code());
        assertFalse(tx.beginOperation("billing", "finalize:7").completed());
        tx.completeOperation("billing", "finalize:7", "done");
        tx.enqueue("billing", "emails", "invoice-final:7", Map.of("invoice", "7"));
        try (Transaction other = b.transaction()) {
          assertThrows(LockTimeoutException.class,
              () -> other.lock("billing", "invoice:7", LockMode.EXCLUSIVE, Duration.ZERO));
        }
        assertEquals("not_found", assertThrows(LeaseholdException.class, () -> client.get("billing", "7")).code());
      }
      assertTrue(kept.finished());
      var refused = assertThrows(LeaseholdException.class, () -> kept.put("billing", "7", "again"));
      assertEquals("no_transaction", refused.code());
      assertEquals("no_transaction", assertThrows(LeaseholdException.class, kept::commit).code());
      kept.rollback(); // does nothing

      assertEquals("not_found", assertThrows(LeaseholdException.class, () -> client.get("billing", "7")).code());
      assertEquals(List.of(), client.claim("billing", "emails", "mailer", 10, Duration.ofSeconds(30)));
      try (Lock lk = b.lock("billing", "invoice:7", LockMode.EXCLUSIVE, Duration.ZERO);
          Transaction again = a.transaction()) {
        assertTrue(lk.fence() > 0);
        assertFalse(again.beginOperation("billing", "finalize:7").completed());
      }
    }
  }

  @Test
  void aCommitIsAbortedByAMovedVersion() {
    assertEquals(1, client.put("billing", "9", "v1"));
    try (Session s = client.session("a", Duration.ofSeconds(10));
        Lock guard = s.lock("billing", "invoice:9", LockMode.EXCLUSIVE, Duration.ZERO)) {
      Transaction tx = s.transaction();
      tx.save("billing", "9", "v2", Proof.fence(guard.fence()).ifVersion(1));
      tx.completeOperation("billing", "finalize:9", Map.of("total", 9));
      assertEquals(2, client.save("billing", "9", "moved", guard.fence()));
      var e = assertThrows(TransactionAbortedException.class, tx::commit);
      assertEquals("transaction_aborted", e.code());
      assertEquals(409, e.status());
      assertTrue(tx.finished());
      assertEquals("no_transaction", assertThrows(LeaseholdException.class, () -> tx.put("billing", "x", "y")).code());
      tx.close(); // nothing to roll back

      assertEquals("moved", client.get("billing", "9").body());
      try (Transaction next = s.transaction()) {
        assertNotEquals(tx.number(), next.number());
        assertFalse(next.beginOperation("billing", "finalize:9").completed(), "nothing applied");
        next.save("billing", "9", "v3", Proof.fence(guard.fence()).ifVersion(2)); // the retry reads again
        List<Applied> applied = next.commit();
        assertEquals(1, applied.size());
        assertEquals(3, applied.get(0).version());
      }
      assertEquals("v3", client.get("billing", "9").body());
    }
  }

  @Test
  void claimAndAck() {
    Enqueued first = client.enqueue("billing", "emails", "k1", Map.of("n", 1));
    assertTrue(first.id() > 0);
    assertFalse(first.duplicate());
    assertFalse(first.staged());
    Enqueued again = client.enqueue("billing", "emails", "k1", Map.of("n", 2));
    assertTrue(again.duplicate());
    assertEquals(first.id(), again.id());

    List<Message> msgs = client.claim("billing", "emails", "mailer", 10, Duration.ofSeconds(30));
    assertEquals(1, msgs.size());
    Message m = msgs.get(0);
    assertEquals(first.id(), m.id());
    assertEquals(1, m.payload().path("n").asInt());
    assertEquals(1, m.attempt());
    assertFalse(m.claimToken().isEmpty());

    Message forged = new Message(m.id(), m.key(), m.payload(), m.attempt(), "0123456789abcdef0123456789abcdef",
        m.leaseExpiresAt());
    var lost = assertThrows(LostException.class, () -> client.ack("billing", "emails", forged));
    assertEquals("not_owner", lost.code());
    assertEquals(423, lost.status());

    client.ack("billing", "emails", m);
    client.ack("billing", "emails", m); // a repeated ack is harmless
    assertEquals(List.of(), client.claim("billing", "emails", "mailer", 10, Duration.ofSeconds(30)));

    Message unknown = new Message(m.id() + 1000, "nope", m.payload(), 1, m.claimToken(), m.leaseExpiresAt());
    assertEquals("not_found", assertThrows(LeaseholdException.class,
        () -> client.ack("billing", "emails", unknown)).code());
  }
}
