package io.leasehold;

/**
 * An application lock held by a {@link Session} (owner Session). Thread-safe; close it (or
 * {@link #release()}) to give it back.
 */
public final class Lock extends Held {
  private final String resource;
  private final LockMode mode;
  private final int count;

  Lock(Session session, String ns, String principal, String resource, Grant grant) {
    this(session, ns, principal, resource, lockKey(ns, principal, resource), grant);
  }

  Lock(Session session, String ns, String principal, String resource, String key, Grant grant) {
    super(session, ns, principal, key, grant);
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
    byte[] body = Json.flat("session", session.id(), "resource", resource, "owner", "Session",
        "principal", principal);
    Answer a = session.transport().call(Request.write("POST", "/v1/applocks/" + Json.seg(ns) + "/release", body));
    if (a.status() != 200) {
      throw Errors.fromAnswer(a.status(), a.json());
    }
  }
}
