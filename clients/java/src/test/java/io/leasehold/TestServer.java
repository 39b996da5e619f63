package io.leasehold;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@code leasehold serve} for a test, from env LEASEHOLD_BINARY (a test fails, never
 * skips, without it): on a port of its own and a data folder kept across kill -9 and restart.
 */
final class TestServer implements AutoCloseable {
  private final Path data;
  private final String config;
  private final String scheme;
  private final List<String> args;
  private Process process;
  private int port;

  /**
   * A server with {@code config} (null: none) and more {@code args} of serve; {@code scheme}
   * "https" when they turn TLS on.
   */
  TestServer(String config, String scheme, List<String> args) throws IOException, InterruptedException {
    this.data = Files.createTempDirectory("leasehold-java-test");
    this.config = config;
    this.scheme = scheme;
    this.args = List.copyOf(args);
    start(0);
  }

  TestServer(String config) throws IOException, InterruptedException {
    this(config, "http", List.of());
  }

  TestServer() throws IOException, InterruptedException {
    this(null);
  }

  static String binary() {
    String b = System.getenv("LEASEHOLD_BINARY");
    if (b == null || b.isEmpty() || !Files.isExecutable(Path.of(b))) {
      throw new IllegalStateException("LEASEHOLD_BINARY must name the leasehold server binary (got " + b + ")");
    }
    return b;
  }

  private void start(int onPort) throws IOException, InterruptedException {
    Path portFile = data.resolve("port");
    Files.deleteIfExists(portFile);
    List<String> cmd = new ArrayList<>(List.of(binary(), "serve", "--listen", "127.0.0.1:" + onPort,
        "--port-file", portFile.toString(), "--data", data.resolve("db").toString()));
    if (config != null) {
      Path c = data.resolve("config.json");
      Files.writeString(c, config);
      cmd.add("--config");
      cmd.add(c.toString());
    }
    cmd.addAll(args);
    process = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(data.resolve("server.log").toFile()).start();
    long until = System.nanoTime() + 20_000_000_000L;
    while (System.nanoTime() < until) {
      if (Files.exists(portFile)) {
        String text = Files.readString(portFile).strip();
        if (!text.isEmpty()) {
          port = Integer.parseInt(text);
          return;
        }
      }
      if (!process.isAlive()) {
        throw new IllegalStateException("the server exited: " + Files.readString(data.resolve("server.log")));
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("the server did not start");
  }

  String url() {
    return scheme + "://127.0.0.1:" + port;
  }

  int port() {
    return port;
  }

  /** SIGKILL, then a new server on the same port and data. */
  void kill9Restart() throws IOException, InterruptedException {
    process.destroyForcibly().waitFor();
    start(port);
  }

  /** One request straight to the server (as an administrator would); answers the status. */
  int http(String method, String path) throws IOException, InterruptedException {
    return http(method, path, null);
  }

  /** As {@link #http(String, String)}, with a JSON body (null: none). */
  int http(String method, String path, String json) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url() + path));
    if (json != null) {
      b.header("Content-Type", "application/json");
    }
    HttpRequest r = b.method(method, json == null ? HttpRequest.BodyPublishers.noBody()
        : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build();
    return HttpClient.newHttpClient().send(r, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
        .statusCode();
  }

  @Override
  public void close() {
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
