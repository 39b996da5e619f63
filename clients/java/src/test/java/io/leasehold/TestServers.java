package io.leasehold;

/** {@link TestServer} for tests outside the package (the ShedLock provider's). */
public final class TestServers {
  private TestServers() {}

  /** A new server on SQLite; close it to stop it. */
  public static AutoCloseable start() throws Exception {
    return new TestServer();
  }

  /** Its URL. */
  public static String url(AutoCloseable server) {
    return ((TestServer) server).url();
  }
}
