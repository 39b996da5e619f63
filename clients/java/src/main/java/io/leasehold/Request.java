package io.leasehold;

/**
 * One HTTP request as the transport sends it.
 *
 * @param method GET, POST, PUT or DELETE
 * @param path the path with its query
 * @param body the JSON body, or null
 * @param retry what may be done again after a failure (docs/client.md)
 * @param waitMs the server-side wait (a lock's timeout) in ms; -1 without limit
 */
record Request(String method, String path, byte[] body, Retry retry, long waitMs) {
  /** What may be done again with a request after a failure. */
  enum Retry {
    /** GET, keepalive, cancel, a checkout with its own token. */
    IDEMPOTENT,
    /** Sent once; to the next node only when nothing was sent, or on 503. */
    WRITE,
    /** Sent once; a break or a 503 is a broken wait (ride-through). */
    LOCK
  }

  static Request get(String path) {
    return new Request("GET", path, null, Retry.IDEMPOTENT, 0);
  }

  static Request write(String method, String path, byte[] body) {
    return new Request(method, path, body, Retry.WRITE, 0);
  }
}
