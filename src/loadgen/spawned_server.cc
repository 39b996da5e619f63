#include "loadgen/spawned_server.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

extern char** environ;

namespace leasehold::loadgen {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr int kStartPolls = 1'000;  // 10 s at 10 ms
constexpr int kStopPolls = 1'000;

Result<std::string> MakeDirectory() {
  std::string pattern =
      (fs::temp_directory_path() / "leasehold-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return Error(StatusCode::kUnavailable,
                 "cannot create a temporary directory under " +
                     fs::temp_directory_path().string());
  }
  return pattern;
}

}  // namespace

Result<std::unique_ptr<SpawnedServer>> SpawnedServer::Start(
    const std::string& binary) {
  auto directory = MakeDirectory();
  if (!directory) return std::unexpected(directory.error());
  std::unique_ptr<SpawnedServer> server(new SpawnedServer());
  server->directory_ = *directory;
  const std::string port_file = *directory + "/port";
  const std::string log = *directory + "/serve.log";
  std::vector<std::string> args = {binary,        "serve",
                                   "--listen",    "127.0.0.1:0",
                                   "--data",      *directory + "/data",
                                   "--port-file", port_file};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int spawned = posix_spawn(&server->pid_, binary.c_str(), &actions,
                                  nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    server->pid_ = -1;
    return Error(StatusCode::kUnavailable, "cannot start " + binary);
  }
  for (int i = 0; i < kStartPolls; ++i) {
    std::ifstream in(port_file);
    int port = 0;
    if (in >> port && port > 0) {
      server->port_ = static_cast<std::uint16_t>(port);
      return server;
    }
    if (waitpid(server->pid_, nullptr, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      return Error(StatusCode::kUnavailable,
                   "leasehold serve exited at start; see " + log);
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return Error(StatusCode::kUnavailable,
               "leasehold serve did not start within 10 s; see " + log);
}

void SpawnedServer::Stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < kStopPolls; ++i) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

SpawnedServer::~SpawnedServer() {
  Stop();
  std::error_code ignored;
  if (!directory_.empty()) fs::remove_all(directory_, ignored);
}

}  // namespace leasehold::loadgen
