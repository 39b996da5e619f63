// `leasehold lock` and `leasehold unlock`: application locks from a shell.
// `lock NAME -- COMMAND` holds the lock, kept alive, while COMMAND runs.
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <iostream>

#include "cli/child_process.h"
#include "cli/client_commands.h"

namespace leasehold::cli {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

struct LockFlags {
  ClientFlags client;
  std::string name;
  std::string mode = "Exclusive";
  std::string timeout = "-1";
  std::string session;
  std::string session_name;
  std::string ttl = "60s";
  std::string principal = "public";
  std::string on_loss = "kill";
  int conflict_exit_code = kExitRefused;
  std::vector<std::string> command;
};

std::string DefaultSessionName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const char* user = std::getenv("USER");
  return std::string(user != nullptr ? user : "leasehold") + "@" + host +
         " pid " + std::to_string(::getpid());
}

bool IsRefusal(const client::Error& e) {
  return e.code == "timeout" || e.code == "cancelled" || e.code == "deadlock";
}

// lock NAME -- COMMAND
int RunLocked(const LockFlags& f, client::Client& c) {
  static std::atomic<bool> lost{false};
  const bool kill_on_loss = f.on_loss == "kill";
  auto session = c.StartSession(
      f.session_name, *ParseDuration(f.ttl),
      [name = f.name, kill_on_loss](const client::Error& e) {
        lost = true;
        std::cerr << "leasehold: lost the lock on " << name << " (" << e.code
                  << ": " << e.message << ")"
                  << (kill_on_loss ? "; stopping the command" : "") << "\n";
        if (kill_on_loss) TerminateChild();
      });
  if (!session) return ReportError(session.error(), f.client);
  client::AcquireOptions options;
  options.mode = f.mode;
  options.timeout = *ParseDuration(f.timeout);
  options.principal = f.principal;
  auto guard = session->Lock(f.client.ns, f.name, options);
  if (!guard) {
    if (!IsRefusal(guard.error())) return ReportError(guard.error(), f.client);
    std::cerr << "leasehold: lock " << f.name
              << " not granted: " << guard.error().code << "\n";
    return f.conflict_exit_code;
  }
  const std::vector<std::pair<std::string, std::string>> env = {
      {"LEASEHOLD_SESSION", session->id()},
      {"LEASEHOLD_LOCK", f.client.ns + "/" + f.name},
      {"LEASEHOLD_FENCE", std::to_string(guard->fence())}};
  auto status = RunChild(f.command, env);
  auto released = guard->Release();
  session->End();
  if (!status) {
    std::cerr << "leasehold: " << status.error().message() << "\n";
    return 127;  // as a shell does for a command it cannot run
  }
  if (lost) return kExitLost;
  if (!released && released.error().code != "lost") {
    std::cerr << "leasehold: releasing " << f.name
              << " failed: " << released.error().message << "\n";
  }
  return *status;
}

// lock NAME: held by a session that outlives this process.
int LockAndLeave(const LockFlags& f, client::Client& c) {
  std::string session = f.session;
  const bool opened = session.empty();
  if (opened) {
    auto s = c.OpenSession(f.session_name, *ParseDuration(f.ttl));
    if (!s) return ReportError(s.error(), f.client);
    session = s->id;
  }
  client::AcquireOptions options;
  options.mode = f.mode;
  options.timeout = *ParseDuration(f.timeout);
  options.principal = f.principal;
  auto r = c.Acquire(f.client.ns, session, f.name, options);
  if (!r || !r->granted()) {
    if (opened) c.EndSession(session);
  }
  if (!r) return ReportError(r.error(), f.client);
  if (f.client.json) {
    json::object o{
        {"session", session}, {"result", r->result}, {"status", r->status}};
    if (r->granted()) o["fence"] = r->fence;
    PrintJson(o);
  } else if (r->granted()) {
    std::cout << "locked " << f.client.ns << "/" << f.name << " (" << f.mode
              << ") fence " << r->fence << " in session " << session
              << "\nrelease: leasehold unlock " << f.name << " --session "
              << session << " --ns " << f.client.ns
              << (opened ? "  (or let the session expire)" : "") << "\n";
  } else {
    std::cerr << "leasehold: lock " << f.name << " not granted: " << r->status
              << "\n";
  }
  return r->granted() ? kExitOk : f.conflict_exit_code;
}

}  // namespace

void AddLockCommands(CLI::App& app, int& code) {
  auto f = std::make_shared<LockFlags>();
  f->session_name = DefaultSessionName();
  auto* lock = app.add_subcommand(
      "lock",
      "Take an application lock. With `-- COMMAND`, hold it while COMMAND "
      "runs (like flock(1)); the session is kept alive and the lock released "
      "when COMMAND ends. COMMAND sees LEASEHOLD_FENCE, LEASEHOLD_SESSION and "
      "LEASEHOLD_LOCK. Without COMMAND, the lock stays with the session "
      "(--session, or a new one that expires after --ttl) until `unlock`.");
  AddClientFlags(lock, f->client);
  lock->add_option("name", f->name, "resource name, e.g. invoice:481")
      ->required();
  lock->add_option("command", f->command, "command to run while locked");
  lock->add_option("--mode", f->mode,
                   "Shared, Update, IntentShared, IntentExclusive, Exclusive")
      ->capture_default_str();
  lock->add_option("--timeout", f->timeout,
                   "longest wait: -1 forever, 0 never wait, or a duration")
      ->check(DurationValidator())
      ->capture_default_str();
  lock->add_option("--session", f->session,
                   "take the lock in this existing session (no COMMAND)");
  lock->add_option("--session-name", f->session_name,
                   "name of the session shown to others");
  lock->add_option("--ttl", f->ttl, "session time to live")
      ->check(DurationValidator())
      ->capture_default_str();
  lock->add_option("--principal", f->principal, "lock principal")
      ->capture_default_str();
  lock->add_option(
          "--on-loss", f->on_loss,
          "if the session is lost while COMMAND runs: kill "
          "(SIGTERM to COMMAND itself) or warn; either way the exit code is 4")
      ->check(CLI::IsMember({"kill", "warn"}))
      ->capture_default_str();
  lock->add_option("--conflict-exit-code", f->conflict_exit_code,
                   "exit code when the lock is not granted")
      ->capture_default_str();
  lock->callback([f, &code] {
    if (!f->command.empty() && !f->session.empty()) {
      std::cerr << "leasehold: --session cannot be used with a COMMAND\n";
      code = kExitUsage;
      return;
    }
    auto c = Connect(f->client);
    if (!c) {
      code = kExitFailed;
      return;
    }
    code = f->command.empty() ? LockAndLeave(*f, *c) : RunLocked(*f, *c);
  });

  auto u = std::make_shared<LockFlags>();
  auto* unlock = app.add_subcommand(
      "unlock", "Release an application lock taken with `lock NAME`");
  AddClientFlags(unlock, u->client);
  unlock->add_option("name", u->name, "resource name")->required();
  unlock->add_option("--session", u->session, "the session holding it")
      ->required();
  unlock->add_option("--principal", u->principal, "lock principal")
      ->capture_default_str();
  unlock->callback([u, &code] {
    auto c = Connect(u->client);
    if (!c) {
      code = kExitFailed;
      return;
    }
    auto r =
        c->Release(u->client.ns, u->session, u->name, "Session", u->principal);
    if (!r) {
      code = ReportError(r.error(), u->client);
      return;
    }
    if (u->client.json) {
      PrintJson(json::object{{"result", 0}});
    } else {
      std::cout << "released " << u->client.ns << "/" << u->name << "\n";
    }
    code = kExitOk;
  });
}

}  // namespace leasehold::cli
