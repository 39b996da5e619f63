// Several real `leasehold serve` nodes on one PostgreSQL database, for the
// failover tests: start, kill -9, SIGSTOP, restart on the same port, and
// find the leader. Each node gets its own incarnation directory (port file
// and log) under `dir`.
#ifndef LEASEHOLD_TESTS_CLUSTER_CLUSTER_PROCESSES_H_
#define LEASEHOLD_TESTS_CLUSTER_CLUSTER_PROCESSES_H_

#include <signal.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http/connection.h"
#include "http/spawned_server.h"
#include "tests/testing/test_tls.h"

namespace leasehold::testing {

class ClusterProcesses {
 public:
  using Clock = std::chrono::steady_clock;

  // `config`: a --config file for every node ("" for none).
  ClusterProcesses(std::string store_url, std::string dir, int nodes,
                   std::chrono::milliseconds lease, std::string config = "")
      : store_url_(std::move(store_url)),
        dir_(std::move(dir)),
        lease_(lease),
        config_(std::move(config)) {
    for (int i = 0; i < nodes; ++i) {
      nodes_.push_back({});
      Start(i);
    }
  }

  int size() const { return static_cast<int>(nodes_.size()); }
  std::uint16_t port(int i) const { return nodes_[i].port; }
  std::vector<std::uint16_t> ports() const {
    std::vector<std::uint16_t> out;
    for (const Node& n : nodes_) out.push_back(n.port);
    return out;
  }
  int pid(int i) const { return nodes_[i].process->pid(); }

  // Starts node i (again, on its old port when it had one).
  void Start(int i) {
    Node& n = nodes_[i];
    ++n.incarnation;
    const std::string name = "n" + std::to_string(i);
    std::vector<std::string> flags = {
        "--leader-lease-ms", std::to_string(lease_.count()), "--node", name};
    for (std::string& flag : TestTlsServeFlags()) {
      flags.push_back(std::move(flag));
    }
    auto started = http::SpawnedServer::Start(
        {.binary = LEASEHOLD_BINARY,
         .data_dir = dir_ + "/" + name + "-" + std::to_string(n.incarnation),
         .config = config_,
         .store = store_url_,
         .env = {},
         .log_to_file = true,
         .port = n.port,
         .extra_args = std::move(flags),
         .wait_until_healthy = false,
         .tls = TestTlsClient()});
    if (!started) throw std::runtime_error(started.error());
    n.process = std::move(*started);
    n.port = n.process->port();
  }

  void Kill(int i) { nodes_[i].process->Kill(); }
  void Signal(int i, int signo) { ::kill(pid(i), signo); }

  // Whether node i answers /healthz 200 (it leads and can write).
  bool Healthy(int i, std::chrono::milliseconds within =
                          std::chrono::milliseconds(500)) const {
    http::Address address;
    address.port = nodes_[i].port;
    address.tls = TestTlsClient();
    http::Connection c(address);
    return c.Request(http::Method::kGet, "/healthz", "", Clock::now() + within)
               .status == 200;
  }

  // The node that leads, waiting up to `within` for one.
  std::optional<int> Leader(std::chrono::milliseconds within) const {
    const auto until = Clock::now() + within;
    do {
      for (int i = 0; i < size(); ++i) {
        if (Healthy(i)) return i;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (Clock::now() < until);
    return std::nullopt;
  }

 private:
  struct Node {
    std::unique_ptr<http::SpawnedServer> process;
    std::uint16_t port = 0;
    int incarnation = 0;
  };

  std::string store_url_;
  std::string dir_;
  std::chrono::milliseconds lease_;
  std::string config_;
  std::vector<Node> nodes_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_CLUSTER_CLUSTER_PROCESSES_H_
