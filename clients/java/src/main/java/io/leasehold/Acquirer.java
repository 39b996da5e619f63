package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;

/**
 * Acquires a session's lock or permits, riding through a restart or failover
 * (docs/client.md, "Restarts"): after a break it waits for /healthz, reads what the session
 * holds, and adopts it or asks again with what is left of the timeout.
 */
final class Acquirer {
  /** What a wait asked for, to find it in the holdings; mode null for a semaphore. */
  record Target(String ns, String session, String name, String principal, String mode, int limit, int permits) {}

  private final Transport transport;

  Acquirer(Transport transport) {
    this.transport = transport;
  }

  private static Request request(Target t, long timeoutMs) {
    String path;
    byte[] body;
    if (t.mode() != null) {
      path = "/v1/applocks/" + Json.seg(t.ns()) + "/acquire";
      body = Json.flat("session", t.session(), "resource", t.name(), "mode", t.mode(), "owner", "Session",
          "timeout_ms", timeoutMs, "principal", t.principal());
    } else {
      path = "/v1/semaphores/" + Json.seg(t.ns()) + "/" + Json.seg(t.name()) + "/acquire";
      body = Json.flat("session", t.session(), "limit", t.limit(), "permits", t.permits(), "owner", "Session",
          "timeout_ms", timeoutMs, "principal", t.principal());
    }
    return new Request("POST", path, body, Request.Retry.LOCK, timeoutMs);
  }

  /** Whether a broken wait is asked again. */
  static boolean ridesThrough(boolean heldAlready, long timeoutMs) {
    return !heldAlready && timeoutMs != 0;
  }

  Grant acquire(Target t, Duration timeout, boolean heldAlready) {
    long timeoutMs = Json.ms(timeout);
    Long lockDeadline = timeoutMs < 0 ? null : System.nanoTime() + timeoutMs * 1_000_000L;
    long left = timeoutMs;
    long io = transport.ioTimeout.toNanos();
    while (true) {
      try {
        Answer a = transport.call(request(t, left));
        return Grant.of(a);
      } catch (Transport.WaitBroken e) {
        if (!ridesThrough(heldAlready, left)) {
          throw Transport.unreachable("the wait broke; the lock may or may not be held");
        }
      }
      long until = (lockDeadline != null ? lockDeadline : System.nanoTime()) + io;
      LeaseholdException down = transport.awaitHealthy(until);
      if (down != null) {
        throw down;
      }
      Object held = readHoldings(t);
      if (held instanceof Grant) {
        return (Grant) held;
      }
      if (Boolean.FALSE.equals(held)) {
        throw Transport.unreachable("the wait broke and the session holds another grant");
      }
      if (lockDeadline != null) {
        left = Math.max(0, (lockDeadline - System.nanoTime()) / 1_000_000L);
      }
    }
  }

  /** The grant the session holds (adopted), null when none (ask again), FALSE when another. */
  private Object readHoldings(Target t) {
    if (t.mode() != null) {
      Answer a = transport.call(Request.get("/v1/applocks/" + Json.seg(t.ns())));
      JsonNode doc = a.json();
      if (a.status() != 200) {
        throw Errors.fromAnswer(a.status(), doc);
      }
      for (JsonNode entry : doc.path("locks")) {
        if (!entry.path("resource").asText().equals(t.name())
            || !entry.path("principal").asText("").equalsIgnoreCase(t.principal())) {
          continue;
        }
        for (JsonNode h : entry.path("granted")) {
          if (h.path("session").asText().equals(t.session()) && "Session".equals(h.path("owner").asText())) {
            if (!h.path("mode").asText().equals(t.mode())) {
              return Boolean.FALSE;
            }
            return new Grant(h.path("fence").asLong(0), h.path("mode").asText(), h.path("count").asInt(1), 0, true);
          }
        }
      }
      return null;
    }
    String path = "/v1/semaphores/" + Json.seg(t.ns()) + "/" + Json.seg(t.name()) + "?principal="
        + Json.seg(t.principal());
    Answer a = transport.call(Request.get(path));
    if (a.status() == 404) {
      return null;
    }
    JsonNode doc = a.json();
    if (a.status() != 200) {
      throw Errors.fromAnswer(a.status(), doc);
    }
    for (JsonNode h : doc.path("holders")) {
      if (h.path("session").asText().equals(t.session()) && "Session".equals(h.path("owner").asText())) {
        if (h.path("permits").asInt(0) != t.permits()) {
          return Boolean.FALSE;
        }
        return new Grant(h.path("fence").asLong(0), "", 0, t.permits(), true);
      }
    }
    return null;
  }
}
