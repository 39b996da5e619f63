// SpawnedServer: a `leasehold serve` child process on a free loopback port,
// for whoever needs a real server of its own: the integration tests and
// `leasehold bench --spawn`. It listens on 127.0.0.1:0 and reports its port
// through a port file; Start returns once that file is written (the server
// then accepts connections). Destruction stops it (SIGTERM, then SIGKILL
// after 10 s) and removes the directory it created, if any.
#ifndef LEASEHOLD_SRC_HTTP_SPAWNED_SERVER_H_
#define LEASEHOLD_SRC_HTTP_SPAWNED_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

namespace leasehold::http {

class TlsClientContext;  // tls_client.h

struct SpawnOptions {
  std::string binary;    // the leasehold executable
  std::string data_dir;  // --data; empty: a fresh directory under the
                         // system's temporary directory, removed at the end
  std::string config;    // --config, if not empty
  // --store (a PostgreSQL URL), if not empty: the data lives there, and
  // data_dir only places the port file and the log.
  std::string store;
  // "NAME=value" set in this environment, replacing one of the same name.
  std::vector<std::string> env;
  bool log_to_file = false;  // stderr to serve.log beside the data, not ours
  // The loopback port to listen on; 0: a free one (a restart on the port
  // its clients know needs the old one).
  std::uint16_t port = 0;
  // More `serve` flags, e.g. {"--leader-lease-ms", "1000"}.
  std::vector<std::string> extra_args = {};
  // Start returns only once GET /healthz answers 200 (a node on PostgreSQL
  // serves once it leads), within 30 s.
  bool wait_until_healthy = false;
  // For a server that serves TLS (its --tls-cert in extra_args): how
  // wait_until_healthy asks it (at 127.0.0.1, which its certificate must
  // name). Null: plaintext.
  std::shared_ptr<const TlsClientContext> tls = nullptr;
};

class SpawnedServer {
 public:
  // The server, or why it could not be started.
  static std::expected<std::unique_ptr<SpawnedServer>, std::string> Start(
      SpawnOptions options);
  ~SpawnedServer();
  SpawnedServer(const SpawnedServer&) = delete;
  SpawnedServer& operator=(const SpawnedServer&) = delete;

  std::uint16_t port() const { return port_; }
  int pid() const { return static_cast<int>(pid_); }

  // SIGTERM and wait; the exit status (as from waitpid).
  int Terminate();
  // SIGKILL and wait.
  void Kill();
  // Waits for the process to end by itself; its status (waitpid's).
  int Wait();

 private:
  SpawnedServer() = default;
  int Signal(int signo);
  static std::expected<std::unique_ptr<SpawnedServer>, std::string>
  WaitUntilHealthy(std::unique_ptr<SpawnedServer> server,
                   std::shared_ptr<const TlsClientContext> tls,
                   const std::string& see);

  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string owned_directory_;  // removed on destruction when not empty
};

}  // namespace leasehold::http

#endif  // LEASEHOLD_SRC_HTTP_SPAWNED_SERVER_H_
