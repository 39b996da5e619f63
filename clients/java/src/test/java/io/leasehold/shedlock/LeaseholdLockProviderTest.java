package io.leasehold.shedlock;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.leasehold.LeaseholdClient;
import io.leasehold.LeaseholdException;
import io.leasehold.TestServers;
import java.time.Duration;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** ShedLock's own provider test base (shedlock-test-support), against a real server. */
class LeaseholdLockProviderTest extends AbstractExtensibleLockProviderIntegrationTest {
  private static AutoCloseable server;
  private static LeaseholdClient client;

  @BeforeAll
  static void start() throws Exception {
    server = TestServers.start();
    client = LeaseholdClient.builder().url(TestServers.url(server)).ioTimeout(Duration.ofSeconds(10)).build();
  }

  @AfterAll
  static void stop() throws Exception {
    client.close();
    server.close();
  }

  @Override
  protected ExtensibleLockProvider getLockProvider() {
    return new LeaseholdLockProvider(client, "shedlock", "node-1");
  }

  /** The lease's owner while it has not expired ({@code state} is worked out when read), else null. */
  private static String holder(String lockName) {
    try {
      var r = client.get("shedlock", lockName);
      return r.state().equals("locked") ? r.lockedBy() : null;
    } catch (LeaseholdException e) {
      if (e.code().equals("not_found")) {
        return null;
      }
      throw e;
    }
  }

  @Override
  protected void assertUnlocked(String lockName) {
    assertNull(holder(lockName), lockName + " is held");
  }

  @Override
  protected void assertLocked(String lockName) {
    assertNotNull(holder(lockName), lockName + " is not held");
  }
}
