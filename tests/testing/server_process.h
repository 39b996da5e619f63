// ServerProcess: a real `leasehold serve` on an ephemeral loopback port, in
// its own data directory, for integration tests; and HttpClient, a small
// blocking HTTP/1.1 client to talk to it. Both are the test-facing faces of
// src/http (SpawnedServer and Connection): failures throw here, so that a
// test stops at them.
#ifndef LEASEHOLD_TESTS_TESTING_SERVER_PROCESS_H_
#define LEASEHOLD_TESTS_TESTING_SERVER_PROCESS_H_

#include <boost/json.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace leasehold::testing {

struct HttpAnswer {
  unsigned status = 0;
  std::string body;
  boost::json::value json;         // parsed body, or null
  std::string error_code() const;  // error.code, or ""
};

// One keep-alive connection to 127.0.0.1:port.
class HttpClient {
 public:
  explicit HttpClient(std::uint16_t port);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends "Authorization: Bearer <token>" from now on ("" stops sending it).
  void SetBearerToken(const std::string& token);

  HttpAnswer Request(const std::string& method, const std::string& target,
                     const std::string& body = "");
  // Sends a request and returns without reading the answer.
  void Send(const std::string& method, const std::string& target,
            const std::string& body = "");
  HttpAnswer Receive();
  // As Receive, but throws if the answer is not whole within `timeout`.
  HttpAnswer Receive(std::chrono::milliseconds timeout);
  // Closes the connection abruptly.
  void Close();
  // Sends raw bytes (for malformed requests); returns the raw answer.
  std::string Raw(const std::string& bytes);
  // Reads what the server streams (e.g. Server-Sent Events after a GET
  // sent with Send) until `needle` appears or `timeout` passes; returns all
  // that was read so far on this stream.
  std::string ReadStreamUntil(const std::string& needle,
                              std::chrono::milliseconds timeout);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The path of the `leasehold` binary under test.
std::string LeaseholdBinary();

// What a shell command printed on stdout, and its exit status (-1 if it
// did not exit normally).
struct CommandRun {
  int code = -1;
  std::string out;
  boost::json::value json() const { return boost::json::parse(out); }
};
// Runs `command` with /bin/sh, as a script would, and waits for it.
CommandRun RunShell(const std::string& command);

}  // namespace leasehold::testing

namespace leasehold::http {
class SpawnedServer;
}  // namespace leasehold::http

namespace leasehold::testing {

class ServerProcess {
 public:
  // Starts `leasehold serve` with `data_dir` (and `config`, if not empty),
  // with this process's environment and `env` ("NAME=value" each, replacing
  // a variable of the same name); returns once it listens.
  // `port` 0 takes a free one.
  ServerProcess(const std::string& data_dir, const std::string& config = "",
                const std::vector<std::string>& env = {},
                std::uint16_t port = 0);
  // As the constructor, with another build of the server: `binary`.
  static std::unique_ptr<ServerProcess> OfBinary(
      const std::string& binary, const std::string& data_dir,
      const std::string& config, const std::vector<std::string>& env);
  // `leasehold serve --store store_url` (PostgreSQL) with a 1 s leader
  // lease and `flags`, once it leads (/healthz 200); `scratch_dir` holds
  // its port file.
  static std::unique_ptr<ServerProcess> WithStore(
      const std::string& store_url, const std::string& scratch_dir,
      const std::vector<std::string>& flags = {});
  // `leasehold serve --store memory --clock manual` (docs/testing.md),
  // with `config` if not empty; `scratch_dir` holds its port file.
  static std::unique_ptr<ServerProcess> InMemoryWithManualClock(
      const std::string& scratch_dir, const std::string& config = "");
  ~ServerProcess();  // SIGTERM, then SIGKILL if it does not stop

  std::uint16_t port() const;
  int pid() const;  // the process id, while it runs
  // SIGTERM and wait; returns the exit status (as from waitpid).
  int Terminate();
  void Kill();  // SIGKILL and wait
  // Waits for the process to end by itself; returns its status (waitpid's).
  int Wait();

 private:
  explicit ServerProcess(std::unique_ptr<http::SpawnedServer> server);

  std::unique_ptr<http::SpawnedServer> server_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_SERVER_PROCESS_H_
