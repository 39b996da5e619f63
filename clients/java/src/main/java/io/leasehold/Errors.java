package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** Every error built from an answer is built here (one place to type them). */
final class Errors {
  private Errors() {}

  /** The error for an answer in the API's error shape {"error":{"code","message"}}. */
  static LeaseholdException fromAnswer(int status, JsonNode doc) {
    JsonNode err = doc.get("error");
    String code;
    String message;
    if (err != null && err.isObject()) {
      code = err.path("code").asText("error");
      message = err.path("message").asText("");
    } else {
      code = "http_" + status;
      String text = doc.toString();
      message = text.substring(0, Math.min(200, text.length()));
    }
    switch (code) {
      case "session_not_found":
        return new SessionLostException(code, message, status);
      case "transaction_aborted":
      case "transaction_expired":
      case "transaction_lost":
        return new TransactionAbortedException(code, message, status);
      case "stale_fence":
        return new StaleFenceException(code, message, status);
      case "locked":
        return new LockedException(message, status, Json.text(doc, "locked_by"));
      default:
        return new LeaseholdException(code, message, status);
    }
  }

  static List<CycleEdge> cycle(JsonNode deadlock) {
    List<CycleEdge> edges = new ArrayList<>();
    if (deadlock == null || !deadlock.isObject()) {
      return edges;
    }
    for (JsonNode e : deadlock.path("cycle")) {
      edges.add(new CycleEdge(e.path("waiter").asText(), e.path("holder").asText(), e.path("resource").asText(),
          Json.text(e, "waiter_name"), Json.text(e, "holder_name"), Json.text(e, "wanted")));
    }
    return edges;
  }

  /** The error for a 409 lock or semaphore answer (result -1/-2/-3, or an error). */
  static LeaseholdException lockRefusal(int status, JsonNode doc) {
    int result = doc.path("result").asInt(0);
    switch (result) {
      case -1:
        return new LockTimeoutException("timeout", "not granted within the timeout", status);
      case -2:
        return new CancelledException("cancelled", "the wait was cancelled", status);
      case -3:
        return new DeadlockException("chosen as the deadlock victim", status, cycle(doc.get("deadlock")));
      default:
        return fromAnswer(status, doc);
    }
  }

  /** A refused write (412/423 with {flag: false}) keeps its reason as the code. */
  static LeaseholdException writeRefusal(int status, JsonNode doc, String flag) {
    JsonNode f = doc.get(flag);
    if ((status == 412 || status == 423) && f != null && f.isBoolean() && !f.asBoolean()) {
      String reason = doc.path("reason").asText("refused");
      return new LeaseholdException(reason, flag + " refused: " + reason, status);
    }
    return fromAnswer(status, doc);
  }
}
