package io.leasehold;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The client against a real server; every answer is validated against docs/openapi.yaml. */
class ClientTest extends ServerTestBase {
  @Test
  void lockFenceAndTypedRefusals() {
    try (Session a = client.session("a", Duration.ofSeconds(10));
        Session b = client.session("b", Duration.ofSeconds(10))) {
      long fence;
      try (Lock lk = a.lock("app", "invoice:481", LockMode.EXCLUSIVE, Duration.ofSeconds(5))) {
        fence = lk.fence();
        assertTrue(fence > 0);
        assertFalse(lk.waited());
        assertEquals(LockMode.EXCLUSIVE, lk.mode());
        assertTrue(lk.held());
        var e = assertThrows(LockTimeoutException.class,
            () -> b.lock("app", "invoice:481", LockMode.EXCLUSIVE, Duration.ZERO));
        assertEquals("timeout", e.code());
        assertEquals(409, e.status());
      }
      try (Lock again = b.lock("app", "invoice:481", LockMode.SHARED, Duration.ofSeconds(1))) {
        assertTrue(again.fence() > fence);
      }
    }
  }

  @Test
  void asyncAcquireWaitsForTheRelease() throws Exception {
    try (Session a = client.session("a", Duration.ofSeconds(10));
        Session b = client.session("b", Duration.ofSeconds(10))) {
      Lock first = a.lock("app", "job", LockMode.EXCLUSIVE, Duration.ZERO);
      CompletableFuture<Lock> waiting = b.lockAsync("app", "job", LockMode.EXCLUSIVE, Duration.ofSeconds(5));
      Thread.sleep(200);
      assertFalse(waiting.isDone());
      first.release();
      try (Lock second = waiting.get(5, TimeUnit.SECONDS)) {
        assertTrue(second.waited());
      }
    }
  }

  @Test
  void deadlockVictimNamesTheCycle() throws Exception {
    try (Session a = client.session("a", Duration.ofSeconds(10));
        Session b = client.session("b", Duration.ofSeconds(10));
        Lock x = a.lock("app", "X", LockMode.EXCLUSIVE, Duration.ZERO);
        Lock y = b.lock("app", "Y", LockMode.EXCLUSIVE, Duration.ZERO)) {
      assertTrue(x.held() && y.held());
      CompletableFuture<Lock> aWaits = a.lockAsync("app", "Y", LockMode.EXCLUSIVE, Duration.ofSeconds(10));
      Thread.sleep(200);
      CompletableFuture<Lock> bWaits = b.lockAsync("app", "X", LockMode.EXCLUSIVE, Duration.ofSeconds(10));
      CompletableFuture.anyOf(aWaits, bWaits).handle((v, e) -> null).get(10, TimeUnit.SECONDS);
      CompletableFuture<Lock> lost = aWaits.isCompletedExceptionally() ? aWaits : bWaits;
      var e = assertThrows(ExecutionException.class, lost::get);
      DeadlockException victim = (DeadlockException) e.getCause();
      x.release();
      y.release();
      (lost == aWaits ? bWaits : aWaits).get(10, TimeUnit.SECONDS).release();
      assertTrue(victim != null && !victim.getCycle().isEmpty());
    }
  }

  @Test
  void semaphoreLimitsHolders() {
    try (Session a = client.session("a", Duration.ofSeconds(10));
        Session b = client.session("b", Duration.ofSeconds(10));
        SemaphoreSlot one = a.semaphore("app", "provider", 1, 1, Duration.ZERO)) {
      assertEquals(1, one.permits());
      assertThrows(LockTimeoutException.class, () -> b.semaphore("app", "provider", 1, 1, Duration.ZERO));
      one.release();
      try (SemaphoreSlot two = b.semaphore("app", "provider", 1, 1, Duration.ZERO)) {
        assertTrue(two.fence() > one.fence());
      }
    }
  }

  @Test
  void checkoutSaveCheckinAndLocked() {
    assertEquals(1, client.put("docs", "42", "first"));
    try (Checkout doc = client.checkout("docs", "42", "asha", Duration.ofSeconds(30))) {
      var e = assertThrows(LockedException.class,
          () -> client.checkout("docs", "42", "ben", Duration.ofSeconds(30)));
      assertEquals("asha", e.lockedBy());
      assertEquals(2, doc.save("second"));
      RecordValue r = client.get("docs", "42");
      assertEquals("second", r.body());
      assertEquals("asha", r.lockedBy());
    }
    assertNull(client.get("docs", "42").lockedBy());
    var missing = assertThrows(LeaseholdException.class, () -> client.get("docs", "nope"));
    assertEquals("not_found", missing.code());
  }

  @Test
  void fencedSaveRefusesAnOlderFence() {
    try (Session a = client.session("a", Duration.ofSeconds(10))) {
      long old;
      try (Lock lk = a.lock("billing", "481", LockMode.EXCLUSIVE, Duration.ZERO)) {
        old = lk.fence();
      }
      client.put("billing", "481", "open");
      try (Lock lk = a.lock("billing", "481", LockMode.EXCLUSIVE, Duration.ZERO)) {
        client.save("billing", "481", "paid", lk.fence());
      }
      assertThrows(StaleFenceException.class, () -> client.save("billing", "481", "again", old));
    }
  }

  @Test
  void sessionDeletedByAnAdministratorIsLostOnce() throws Exception {
    Session s = client.session("doomed", Duration.ofSeconds(3));
    Lock lk = s.lock("app", "A", LockMode.EXCLUSIVE, Duration.ZERO);
    assertEquals(204, server.http("DELETE", "/v1/sessions/" + s.id()));
    s.lost().get(5, TimeUnit.SECONDS);
    lk.lost().get(1, TimeUnit.SECONDS);
    assertFalse(lk.held());
    assertThrows(LostException.class, lk::release);
    assertThrows(SessionLostException.class, () -> s.lock("app", "B", LockMode.EXCLUSIVE, Duration.ZERO));
  }

  @Test
  void aBrokenLockIsLostAndItsReleaseSendsNothing() throws Exception {
    try (Session s = client.session("worker", Duration.ofMillis(1500))) {
      Lock lk = s.lock("app", "job", LockMode.EXCLUSIVE, Duration.ZERO);
      SemaphoreSlot slot = s.semaphore("app", "lanes", 2, 1, Duration.ZERO);
      assertEquals(200, server.http("POST", "/v1/applocks/app/break",
          "{\"session\":\"" + s.id() + "\",\"resource\":\"job\"}"));
      lk.lost().get(5, TimeUnit.SECONDS);
      assertFalse(lk.held());
      assertTrue(slot.held());
      assertFalse(s.isLost());
      Lock again = s.lock("app", "job", LockMode.EXCLUSIVE, Duration.ZERO);
      assertThrows(LostException.class, lk::release);
      assertEquals(200, server.http("GET", "/v1/applocks/app/job"), "the lock taken again is held");
      again.release();
      slot.release();
    }
  }

  @Test
  void renewalsOutliveTheTtl() throws Exception {
    client.put("docs", "k", "draft");
    try (Session s = client.session("short", Duration.ofMillis(1500));
        Checkout doc = client.checkout("docs", "k", "asha", Duration.ofMillis(1500))) {
      Thread.sleep(4000);
      assertFalse(s.isLost());
      assertTrue(doc.held());
      assertEquals(2, doc.save("still mine"));
    }
  }

  @Test
  void brokenCheckoutIsLostAndSaveRefused() throws Exception {
    client.put("docs", "k", "draft");
    Checkout doc = client.checkout("docs", "k", "asha", Duration.ofMillis(1500));
    assertEquals(200, server.http("POST", "/v1/records/docs/k/break"));
    doc.lost().get(5, TimeUnit.SECONDS);
    assertThrows(LostException.class, () -> doc.save("too late"));
    assertNull(client.get("docs", "k").lockedBy(), "the accidental new lease was checked in");
  }

  @Test
  void heldLockSurvivesKill9() throws Exception {
    try (Session s = client.session("durable", Duration.ofSeconds(6));
        Session other = client.session("other", Duration.ofSeconds(6));
        Lock lk = s.lock("app", "A", LockMode.EXCLUSIVE, Duration.ZERO)) {
      server.kill9Restart();
      Thread.sleep(4500);
      assertFalse(s.isLost());
      assertTrue(lk.held());
      assertThrows(LockTimeoutException.class, () -> other.lock("app", "A", LockMode.EXCLUSIVE, Duration.ZERO));
    }
  }

  @Test
  void waitRidesThroughARestart() throws Exception {
    try (Session a = client.session("a", Duration.ofSeconds(6));
        Session b = client.session("b", Duration.ofSeconds(6))) {
      Lock first = a.lock("app", "A", LockMode.EXCLUSIVE, Duration.ZERO);
      CompletableFuture<Lock> waiting = b.lockAsync("app", "A", LockMode.EXCLUSIVE, Duration.ofSeconds(15));
      Thread.sleep(300);
      server.kill9Restart();
      Thread.sleep(300);
      first.release();
      try (Lock granted = waiting.get(15, TimeUnit.SECONDS)) {
        assertTrue(granted.waited());
      }
    }
  }

  @Test
  void watchSeesEvents() throws Exception {
    try (Watch w = client.watch("docs")) {
      Event e = null;
      for (int i = 0; i < 50 && e == null; i++) {
        client.put("docs", "probe-" + i, "x");
        CompletableFuture<Event> next = CompletableFuture.supplyAsync(w::next);
        try {
          e = next.get(200, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException notYet) {
          e = next.get(5, TimeUnit.SECONDS);
        }
      }
      assertTrue(e != null && e.type().startsWith("record."), String.valueOf(e));
    }
  }

  @Test
  void badUrlIsRefused() {
    var e = assertThrows(LeaseholdException.class, () -> LeaseholdClient.create("ftp://x"));
    assertEquals("bad_url", e.code());
  }

  @Test
  void unreachableServerIsTyped() {
    try (LeaseholdClient nobody = LeaseholdClient.create("http://127.0.0.1:1")) {
      assertThrows(UnreachableException.class, () -> nobody.session("x", Duration.ofSeconds(5)));
    }
  }
}
