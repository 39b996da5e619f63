package io.leasehold;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * A real server and a client of it for each test, every answer validated against
 * docs/openapi.yaml (and at least one validated per test class).
 */
abstract class ServerTestBase {
  private static OpenApiValidator validator;
  /** The server of the current test. */
  protected TestServer server;
  /** A client of {@link #server}. */
  protected LeaseholdClient client;

  @BeforeAll
  static void contract() throws Exception {
    validator = OpenApiValidator.install();
  }

  @AfterAll
  static void someValidated() {
    assertTrue(validator.check() > 0, "no answer was validated");
  }

  @BeforeEach
  void start() throws Exception {
    server = new TestServer();
    client = LeaseholdClient.builder().url(server.url()).ioTimeout(Duration.ofSeconds(10)).build();
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
    validator.check();
  }
}
