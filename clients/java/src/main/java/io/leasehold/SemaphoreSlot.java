package io.leasehold;

/**
 * Permits of a semaphore held by a {@link Session}. Thread-safe; close it (or
 * {@link #release()}) to give its permits back.
 */
public final class SemaphoreSlot extends Held {
  private final String name;
  private final int limit;
  private final int permits;

  SemaphoreSlot(Session session, String ns, String principal, String name, int limit, int permits, Grant grant) {
    super(session, ns, principal, semaphoreKey(ns, principal, name), grant);
    this.name = name;
    this.limit = limit;
    this.permits = permits;
  }

  static String semaphoreKey(String ns, String principal, String name) {
    return "semaphore\0" + ns + "\0" + principal.toLowerCase(java.util.Locale.ROOT) + "\0" + name;
  }

  /** The semaphore's name. */
  public String name() {
    return name;
  }

  /** The limit every holder gives. */
  public int limit() {
    return limit;
  }

  /** The permits this slot holds. */
  public int permits() {
    return permits;
  }

  @Override
  void sendRelease() {
    byte[] body = Json.flat("session", session.id(), "permits", permits, "owner", "Session",
        "principal", principal);
    String path = "/v1/semaphores/" + Json.seg(ns) + "/" + Json.seg(name) + "/release";
    Answer a = session.transport().call(Request.write("POST", path, body));
    if (a.status() != 200) {
      throw Errors.fromAnswer(a.status(), a.json());
    }
  }
}
