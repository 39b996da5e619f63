package io.leasehold.shedlock;

import io.leasehold.LeaseholdClient;
import io.leasehold.Lease;
import io.leasehold.LockedException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link ExtensibleLockProvider} on leasehold, so that {@code @SchedulerLock} jobs
 * run on it. A lock is a checkout lease of key = the lock's name in namespace {@code ns}, with
 * ttl = {@code lockAtMostFor} and owner = this node's name, not renewed: as ShedLock documents,
 * a node that dies holding it frees it when lockAtMostFor has passed. {@code unlock()} checks
 * the lease in, or, while {@code lockAtLeastFor} has not passed, shortens it to run out then.
 * {@code extend()} renews it with the same token. Thread-safe.
 */
public final class LeaseholdLockProvider implements ExtensibleLockProvider {
  private final LeaseholdClient client;
  private final String ns;
  private final String owner;

  /** Locks in namespace {@code ns}, leased by {@code owner} (this node's name, shown to others). */
  public LeaseholdLockProvider(LeaseholdClient client, String ns, String owner) {
    this.client = client;
    this.ns = ns;
    this.owner = owner;
  }

  @Override
  public Optional<SimpleLock> lock(LockConfiguration config) {
    Duration ttl = Duration.between(ClockProvider.now(), config.getLockAtMostUntil());
    if (ttl.isNegative() || ttl.isZero()) {
      return Optional.empty();
    }
    try {
      return Optional.of(new LeaseLock(client.lease(ns, config.getName(), owner, ttl), config));
    } catch (LockedException e) {
      return Optional.empty();
    }
  }

  /** One lock: its lease. */
  private final class LeaseLock extends AbstractSimpleLock {
    private final Lease lease;

    LeaseLock(Lease lease, LockConfiguration config) {
      super(config);
      this.lease = lease;
    }

    @Override
    protected void doUnlock() {
      Instant now = ClockProvider.now();
      Instant atLeastUntil = lockConfiguration.getLockAtLeastUntil();
      if (atLeastUntil.isAfter(now)) {
        client.renew(lease, Duration.between(now, atLeastUntil));
      } else {
        client.checkin(lease);
      }
    }

    @Override
    protected Optional<SimpleLock> doExtend(LockConfiguration config) {
      Duration ttl = Duration.between(ClockProvider.now(), config.getLockAtMostUntil());
      if (ttl.isNegative() || ttl.isZero() || !client.renew(lease, ttl)) {
        return Optional.empty();
      }
      return Optional.of(new LeaseLock(lease, config));
    }
  }
}
