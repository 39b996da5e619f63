package io.leasehold;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a session holds through a handle (a {@link Lock} or a {@link SemaphoreSlot}): its fence,
 * whether it waited, and a loss signal. Thread-safe. {@link #close()} releases, best effort.
 */
public abstract class Held implements AutoCloseable {
  final Session session;
  final String ns;
  final String principal;
  final String key;
  private final long fence;
  private final boolean waited;
  /** Set once when lost; {@link #lost} is made only when asked for (most handles never are). */
  private volatile boolean isLost;
  private volatile CompletableFuture<Void> lost;
  private final AtomicBoolean released = new AtomicBoolean();

  Held(Session session, String ns, String principal, String key, Grant grant) {
    this.session = session;
    this.ns = ns;
    this.principal = principal;
    this.key = key;
    this.fence = grant.fence();
    this.waited = grant.waited();
  }

  /** The fence of the grant: pass it to the writes this lock guards (storage refuses older ones). */
  public long fence() {
    return fence;
  }

  /** True when granted after waiting (result 1), or adopted after a restart. */
  public boolean waited() {
    return waited;
  }

  /** The namespace. */
  public String ns() {
    return ns;
  }

  /**
   * Completed once when this is lost: its session was lost, or the server took it back (a hold
   * limit, a break; noticed at the next keepalive). Never by a release. Its callbacks run on a
   * client thread: keep them short.
   */
  public CompletableFuture<Void> lost() {
    CompletableFuture<Void> f = lost;
    if (f == null) {
      synchronized (this) {
        f = lost;
        if (f == null) {
          f = new CompletableFuture<>();
          lost = f;
        }
      }
    }
    if (isLost) {
      f.complete(null);
    }
    return f;
  }

  /** True while neither released nor lost. */
  public boolean held() {
    return !released.get() && !isLost;
  }

  void markLost() {
    if (!released.get()) {
      isLost = true;
      CompletableFuture<Void> f = lost;
      if (f != null) {
        f.complete(null);
      }
    }
  }

  /**
   * Gives it back. Throws {@link LostException} when it was lost before, {@link SessionLostException}
   * when the session is gone, or another {@link LeaseholdException}; a second call does nothing.
   */
  public void release() {
    if (!released.compareAndSet(false, true)) {
      return;
    }
    session.forget(this);
    if (isLost) {
      throw new LostException("lost", "it was lost before the release", 0);
    }
    try {
      sendRelease();
    } catch (SessionLostException e) {
      session.noticeLoss();
      throw e;
    }
  }

  abstract void sendRelease();

  /** Releases, best effort: errors are ignored (call {@link #release()} to see them). */
  @Override
  public void close() {
    try {
      release();
    } catch (LeaseholdException ignored) {
      // best effort, as documented
    }
  }
}
