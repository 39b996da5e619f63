package io.leasehold;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A record checked out (a lease on its key) that renews itself with its token every ttl/3. A
 * renewal refused (someone else holds the key) or granted as a new lease (the old one was
 * broken or ran out) loses it: the accidental lease is checked in, {@link #lost()} completes
 * once, and {@link #save(String)} throws {@link LostException}. Thread-safe; {@link #close()}
 * checks it in, best effort.
 */
public final class Checkout implements AutoCloseable {
  private final LeaseholdClient client;
  private final String ns;
  private final String key;
  private final String owner;
  private final Duration ttl;
  private final String token;
  private final long fence;
  private final long version;
  private final CompletableFuture<Void> lost = new CompletableFuture<>();
  private final AtomicBoolean checkedIn = new AtomicBoolean();
  private final Periodic renewal;

  Checkout(LeaseholdClient client, String ns, String key, String owner, Duration ttl, String token, JsonNode doc) {
    this.client = client;
    this.ns = ns;
    this.key = key;
    this.owner = owner;
    this.ttl = ttl;
    this.token = token;
    this.fence = doc.path("fence").asLong(0);
    this.version = doc.path("version").asLong(0);
    this.renewal = client.every(Math.max(1, ttl.toMillis() / 3), this::renewOnce);
  }

  static Request request(String ns, String key, String owner, Duration ttl, String token) {
    ObjectNode doc = Json.object().put("owner", owner).put("ttl_ms", ttl.toMillis()).put("token", token);
    // A checkout with its own token is idempotent: asking twice grants once.
    return new Request("POST", "/v1/records/" + Json.seg(ns) + "/" + Json.seg(key) + "/checkout", Json.bytes(doc),
        Request.Retry.IDEMPOTENT, 0);
  }

  /** The namespace. */
  public String ns() {
    return ns;
  }

  /** The key checked out. */
  public String key() {
    return key;
  }

  /** The owner others see. */
  public String owner() {
    return owner;
  }

  /** The lease's token (proof of ownership for saves and the check-in). */
  public String token() {
    return token;
  }

  /** The lease's fence. */
  public long fence() {
    return fence;
  }

  /** The record's version when checked out (0 for a key without a record). */
  public long version() {
    return version;
  }

  /** Completed once when the lease is lost (never by a check-in). */
  public CompletableFuture<Void> lost() {
    return lost;
  }

  /** True while neither checked in nor lost. */
  public boolean held() {
    return !checkedIn.get() && !lost.isDone();
  }

  private void renewOnce() {
    if (!held()) {
      return;
    }
    Answer a;
    try {
      a = client.transport().call(request(ns, key, owner, ttl, token), Math.max(ttl.toMillis() / 6, 1000), false);
    } catch (LeaseholdException e) {
      return; // a network failure: retried at the next period
    }
    if (a.status() == 423) {
      markLost();
      return;
    }
    if (a.status() != 200) {
      return;
    }
    JsonNode doc = a.json();
    if (!doc.path("renewed").asBoolean(false)) {
      if (doc.path("granted").asBoolean(false)) {
        // The old lease was broken or ran out and this is a new one: give it back.
        try {
          sendCheckin();
        } catch (LeaseholdException ignored) {
          // best effort
        }
      }
      markLost();
    }
  }

  private void markLost() {
    if (!checkedIn.get() && lost.complete(null)) {
      renewal.cancel();
    }
  }

  /** Saves {@code body} under the lease; answers the new version. LostException once lost. */
  public long save(String body) {
    if (lost.isDone()) {
      throw new LostException("lost", "the checkout of " + key + " was lost", 0);
    }
    return client.saveWith(ns, key, body, Json.object().put("token", token));
  }

  /** Checks the record in (ends the lease). LostException when it was lost; a second call does nothing. */
  public void checkin() {
    if (!checkedIn.compareAndSet(false, true)) {
      return;
    }
    renewal.cancel();
    if (lost.isDone()) {
      throw new LostException("lost", "the checkout of " + key + " was lost", 0);
    }
    sendCheckin();
  }

  private void sendCheckin() {
    ObjectNode doc = Json.object().put("token", token);
    Answer a = client.transport().call(Request.write("POST",
        "/v1/records/" + Json.seg(ns) + "/" + Json.seg(key) + "/checkin", Json.bytes(doc)));
    if (a.status() != 200) {
      throw Errors.writeRefusal(a.status(), a.json(), "released");
    }
  }

  /** Checks in, best effort (errors ignored). */
  @Override
  public void close() {
    try {
      checkin();
    } catch (LeaseholdException ignored) {
      // best effort, as documented
    }
  }
}
