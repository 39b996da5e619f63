package io.leasehold;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * An application lock held by a {@link Session} (owner Session). Thread-safe; close it (or
 * {@link #release()}) to give it back.
 */
public final class Lock extends Held {
  private final String resource;
  private final LockMode mode;
  private final int count;

  Lock(Session session, String ns, String principal, String resource, Grant grant) {
    super(session, ns, principal, lockKey(ns, principal, resource), grant);
    this.resource = resource;
    this.mode = LockMode.of(grant.mode());
    this.count = grant.count();
  }

  static String lockKey(String ns, String principal, String resource) {
    return "lock\0" + ns + "\0" + principal.toLowerCase(java.util.Locale.ROOT) + "\0" + resource;
  }

  /** The resource locked. */
  public String resource() {
    return resource;
  }

  /** The combined mode the session holds on the resource. */
  public LockMode mode() {
    return mode;
  }

  /** How many times the session holds it. */
  public int count() {
    return count;
  }

  @Override
  void sendRelease() {
    ObjectNode doc = Json.object().put("session", session.id()).put("resource", resource)
        .put("owner", "Session").put("principal", principal);
    Answer a = session.transport().call(Request.write("POST", "/v1/applocks/" + Json.seg(ns) + "/release",
        Json.bytes(doc)));
    if (a.status() != 200) {
      throw Errors.fromAnswer(a.status(), a.json());
    }
  }
}
