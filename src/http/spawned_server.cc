#include "http/spawned_server.h"

#include "http/connection.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>

extern char** environ;

namespace leasehold::http {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr int kStartPolls = 1'000;  // 10 s at 10 ms
constexpr int kStopPolls = 1'000;
constexpr std::chrono::seconds kHealthyWithin{30};

std::expected<std::string, std::string> MakeDirectory() {
  std::string pattern =
      (fs::temp_directory_path() / "leasehold-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return std::unexpected("cannot create a temporary directory under " +
                           fs::temp_directory_path().string());
  }
  return pattern;
}

// Whether `entry` ("NAME=value") is of a variable that `env` sets.
bool SetIn(std::string_view entry, const std::vector<std::string>& env) {
  const std::string_view name = entry.substr(0, entry.find('=') + 1);
  return std::ranges::any_of(
      env, [&](const std::string& e) { return e.starts_with(name); });
}

}  // namespace

std::expected<std::unique_ptr<SpawnedServer>, std::string> SpawnedServer::Start(
    SpawnOptions options) {
  std::unique_ptr<SpawnedServer> server(new SpawnedServer());
  if (options.data_dir.empty()) {
    auto directory = MakeDirectory();
    if (!directory) return std::unexpected(directory.error());
    server->owned_directory_ = *directory;
    options.data_dir = *directory + "/data";
  }
  const std::string port_file = options.data_dir + ".port";
  const std::string log = options.data_dir + ".serve.log";
  std::error_code ignored;
  fs::remove(port_file, ignored);
  std::vector<std::string> args = {
      options.binary, "serve",
      "--listen",     "127.0.0.1:" + std::to_string(options.port),
      "--port-file",  port_file};
  if (options.store.empty()) {
    args.insert(args.end(), {"--data", options.data_dir});
  } else {
    args.insert(args.end(), {"--store", options.store});
  }
  if (!options.config.empty()) {
    args.push_back("--config");
    args.push_back(options.config);
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!SetIn(*e, options.env)) envp.push_back(*e);
  }
  for (auto& e : options.env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.log_to_file) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  const int spawned = posix_spawn(&server->pid_, argv[0], &actions, nullptr,
                                  argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    server->pid_ = -1;
    return std::unexpected("cannot start " + options.binary);
  }
  const std::string see = options.log_to_file ? "; see " + log : "";
  for (int i = 0; i < kStartPolls; ++i) {
    std::ifstream in(port_file);
    int port = 0;
    if (in >> port && port > 0) {
      server->port_ = static_cast<std::uint16_t>(port);
      if (!options.wait_until_healthy) return server;
      return WaitUntilHealthy(std::move(server), options.tls, see);
    }
    if (waitpid(server->pid_, nullptr, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      return std::unexpected("leasehold serve exited at start" + see);
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return std::unexpected("leasehold serve did not start within 10 s" + see);
}

std::expected<std::unique_ptr<SpawnedServer>, std::string>
SpawnedServer::WaitUntilHealthy(std::unique_ptr<SpawnedServer> server,
                                std::shared_ptr<const TlsClientContext> tls,
                                const std::string& see) {
  Address address;
  address.port = server->port_;
  address.tls = std::move(tls);
  Connection c(address);
  const auto give_up = std::chrono::steady_clock::now() + kHealthyWithin;
  while (std::chrono::steady_clock::now() < give_up) {
    if (c.Request(Method::kGet, "/healthz", "", give_up).status == 200) {
      return server;
    }
    if (waitpid(server->pid_, nullptr, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      return std::unexpected("leasehold serve exited at start" + see);
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return std::unexpected("leasehold serve was not healthy within 30 s" + see);
}

int SpawnedServer::Signal(int signo) {
  if (pid_ <= 0) return 0;
  kill(pid_, signo);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

int SpawnedServer::Terminate() { return Signal(SIGTERM); }

void SpawnedServer::Kill() { Signal(SIGKILL); }

int SpawnedServer::Wait() {
  if (pid_ <= 0) return 0;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

SpawnedServer::~SpawnedServer() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    for (int i = 0; i < kStopPolls && pid_ > 0; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) pid_ = -1;
      if (pid_ > 0) std::this_thread::sleep_for(milliseconds(10));
    }
    Kill();
  }
  std::error_code ignored;
  if (!owned_directory_.empty()) fs::remove_all(owned_directory_, ignored);
}

}  // namespace leasehold::http
