package io.leasehold;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What a write shows to be allowed (docs/api.md, "Fenced writes"): a lock's {@code fence}, a
 * lease's {@code token} or {@code owner}, and an expected version. Zero and null fields are
 * not sent. Build one with {@link #fence(long)}, {@link #token(String)}, {@link #owner(String)}
 * or {@link #NONE}, then {@link #ifVersion(long)}.
 *
 * @param fence a grant's fence (0: none)
 * @param token a lease's token (null: none)
 * @param owner a lease's owner (null: none)
 * @param ifVersion the version the record must have (0: any)
 */
public record Proof(long fence, String token, String owner, long ifVersion) {
  /** No proof (an insert, or a key nobody holds). */
  public static final Proof NONE = new Proof(0, null, null, 0);

  /** A lock's or checkout's fence. */
  public static Proof fence(long fence) {
    return new Proof(fence, null, null, 0);
  }

  /** A lease's token. */
  public static Proof token(String token) {
    return new Proof(0, token, null, 0);
  }

  /** A lease's owner. */
  public static Proof owner(String owner) {
    return new Proof(0, null, owner, 0);
  }

  /** This proof, and the record must be at {@code version}. */
  public Proof ifVersion(long version) {
    return new Proof(fence, token, owner, version);
  }

  ObjectNode doc() {
    ObjectNode d = Json.object();
    if (fence != 0) {
      d.put("fence", fence);
    }
    if (token != null) {
      d.put("token", token);
    }
    if (owner != null) {
      d.put("owner", owner);
    }
    if (ifVersion != 0) {
      d.put("if_version", ifVersion);
    }
    return d;
  }
}
