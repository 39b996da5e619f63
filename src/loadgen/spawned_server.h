// SpawnedServer: a `leasehold serve` started by the bench itself, on a free
// loopback port, in a fresh data directory under the system's temporary
// directory; its log goes to a file there. Stopped (SIGTERM, then SIGKILL
// after 10 s) and its directory removed on destruction.
#ifndef LEASEHOLD_LOADGEN_SPAWNED_SERVER_H_
#define LEASEHOLD_LOADGEN_SPAWNED_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "leasehold/status.h"

namespace leasehold::loadgen {

class SpawnedServer {
 public:
  // Starts `binary serve` and returns once it has written its port (it is
  // then accepting connections). `binary` is the leasehold executable.
  static Result<std::unique_ptr<SpawnedServer>> Start(
      const std::string& binary);
  ~SpawnedServer();
  SpawnedServer(const SpawnedServer&) = delete;
  SpawnedServer& operator=(const SpawnedServer&) = delete;

  std::uint16_t port() const { return port_; }
  int pid() const { return static_cast<int>(pid_); }
  const std::string& directory() const { return directory_; }

 private:
  SpawnedServer() = default;
  void Stop();

  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string directory_;
};

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_SPAWNED_SERVER_H_
