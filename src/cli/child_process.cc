#include "cli/child_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace leasehold::cli {
namespace {

std::atomic<pid_t> g_child{0};

void Forward(int signo) {
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, signo);
}

}  // namespace

void TerminateChild() { Forward(SIGTERM); }

Result<int> RunChild(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env) {
  if (argv.empty()) return Error(StatusCode::kBadRequest, "no command given");
  std::vector<std::string> env_text;
  for (const auto& [name, value] : extra_env) {
    env_text.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::ranges::any_of(extra_env, [&](const auto& kv) {
      return entry.starts_with(kv.first + "=");
    });
    if (!replaced) envp.push_back(*e);
  }
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  std::vector<std::string> copies(argv);
  for (auto& a : copies) args.push_back(a.data());
  args.push_back(nullptr);

  struct sigaction forward {};
  forward.sa_handler = Forward;
  sigemptyset(&forward.sa_mask);
  struct sigaction old_int {
  }, old_term{}, old_hup{};
  sigaction(SIGINT, &forward, &old_int);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGHUP, &forward, &old_hup);

  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), envp.data());
  Result<int> result = 0;
  if (rc != 0) {
    result = Error(StatusCode::kBadRequest,
                   "cannot run " + argv[0] + ": " + std::strerror(rc));
  } else {
    g_child.store(pid);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_child.store(0);
    result = WIFEXITED(status)     ? WEXITSTATUS(status)
             : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                   : 1;
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  return result;
}

}  // namespace leasehold::cli
