// `leasehold lock` and `leasehold unlock`: application locks and semaphores
// from a shell.
// `lock NAME -- COMMAND` holds the lock, kept alive, while COMMAND runs.
// `--and NAME2` (repeatable) takes several locks at once with acquire-all:
// in canonical order, all or nothing. `--limit N [--permits K]` makes NAME a
// semaphore of N permits, K of them held while COMMAND runs. Every waiting form
// rides through a restart of the server, and a failover among the nodes --url
// lists, through the client (Session::Lock, Session::Permits, Client::Acquire,
// Client::AcquireAll: a broken wait is asked again, a grant that reached
// the disk is adopted).
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
  std::vector<std::string> more_names;  // --and: taken with acquire-all
  std::string mode = "Exclusive";
  bool mode_given = false;
  std::int64_t limit = 0;    // > 0: NAME is a semaphore of this many permits
  std::int64_t permits = 0;  // of the semaphore; 0: not given (1, or all)
  bool semaphore = false;    // unlock --semaphore
  std::string timeout = "-1";
  std::string max_hold = "0";  // 0: the namespace's hold limit
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

// NAME and every --and NAME, in the mode asked for.
std::vector<client::LockSpec> Specs(const LockFlags& f) {
  std::vector<client::LockSpec> specs{{f.name, f.mode}};
  for (const std::string& n : f.more_names) specs.push_back({n, f.mode});
  return specs;
}

client::AcquireAllOptions AllOptions(const LockFlags& f) {
  client::AcquireAllOptions o;
  o.timeout = *ParseDuration(f.timeout);
  o.principal = f.principal;
  o.max_hold = *ParseDuration(f.max_hold);
  return o;
}

// " a=3 b=4": each lock with its fence.
std::string FenceList(const std::vector<client::GrantedLock>& locks) {
  std::string out;
  for (const auto& l : locks) {
    out += " " + l.resource + "=" + std::to_string(l.fence);
  }
  return out;
}

// lock NAME --and NAME2 -- COMMAND: every lock held by one kept-alive
// session, which is ended (releasing them) when COMMAND ends.
int RunAllLocked(const LockFlags& f, client::Client& c,
                 client::Session& session, const std::atomic<bool>& lost) {
  auto r = c.AcquireAll(f.client.ns, session.id(), Specs(f), AllOptions(f));
  if (!r) return ReportError(r.error(), f.client);
  if (!r->granted()) {
    std::cerr << "leasehold: locks not granted: " << r->status << " on "
              << r->failed_resource << "\n";
    return f.conflict_exit_code;
  }
  std::uint64_t fence = 0;
  for (const auto& l : r->locks) {
    if (l.resource == f.name) fence = l.fence;
  }
  const std::vector<std::pair<std::string, std::string>> env = {
      {"LEASEHOLD_SESSION", session.id()},
      {"LEASEHOLD_LOCK", f.client.ns + "/" + f.name},
      {"LEASEHOLD_FENCE", std::to_string(fence)},
      {"LEASEHOLD_FENCES", FenceList(r->locks).substr(1)}};
  auto status = RunChild(f.command, env);
  session.End();
  if (!status) {
    std::cerr << "leasehold: " << status.error().message() << "\n";
    return 127;
  }
  return lost ? kExitLost : *status;
}

// COMMAND's exit code once it ran holding what it asked for, and was
// released (`released`) after it.
int CommandExit(const LockFlags& f, const Result<int>& status,
                const client::Result<void>& released, bool lost) {
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

client::SemaphoreOptions PermitOptions(const LockFlags& f) {
  client::SemaphoreOptions o;
  o.limit = f.limit;
  o.permits = f.permits > 0 ? f.permits : 1;
  o.timeout = *ParseDuration(f.timeout);
  o.max_hold = *ParseDuration(f.max_hold);
  o.principal = f.principal;
  return o;
}

// lock NAME --limit N --permits K -- COMMAND: the permits held by a
// kept-alive session while COMMAND runs.
int RunWithPermits(const LockFlags& f, client::Session& session,
                   const std::atomic<bool>& lost) {
  const client::SemaphoreOptions options = PermitOptions(f);
  auto guard = session.Permits(f.client.ns, f.name, options);
  if (!guard) {
    if (!IsRefusal(guard.error())) return ReportError(guard.error(), f.client);
    std::cerr << "leasehold: " << options.permits << " of " << f.limit
              << " permits of " << f.name
              << " not granted: " << guard.error().code << "\n";
    return f.conflict_exit_code;
  }
  const std::vector<std::pair<std::string, std::string>> env = {
      {"LEASEHOLD_SESSION", session.id()},
      {"LEASEHOLD_LOCK", f.client.ns + "/" + f.name},
      {"LEASEHOLD_FENCE", std::to_string(guard->fence())},
      {"LEASEHOLD_PERMITS", std::to_string(guard->permits())}};
  auto status = RunChild(f.command, env);
  auto released = guard->Release();
  session.End();
  return CommandExit(f, status, released, lost);
}

// lock NAME -- COMMAND
int RunLocked(const LockFlags& f, client::Client& c) {
  static std::atomic<bool> lost{false};
  const bool kill_on_loss = f.on_loss == "kill";
  const auto on_loss = [name = f.name, kill_on_loss](std::string_view why) {
    lost = true;
    std::cerr << "leasehold: lost the lock on " << name << " (" << why << ")"
              << (kill_on_loss ? "; stopping the command" : "") << "\n";
    if (kill_on_loss) TerminateChild();
  };
  auto session = c.StartSession(
      f.session_name, *ParseDuration(f.ttl),
      [on_loss](const client::Error& e) { on_loss(e.code + ": " + e.message); },
      // The namespace keeps its locks in memory and the server restarted.
      [on_loss] { on_loss("locks_lost: the server restarted"); },
      // The server took it back: its hold limit passed, or it was broken.
      [on_loss](const client::LostHold& h) {
        on_loss(h.reason == "broken" ? "broken by an administrator"
                                     : "expired: its hold limit passed");
      });
  if (!session) return ReportError(session.error(), f.client);
  if (!f.more_names.empty()) return RunAllLocked(f, c, *session, lost);
  if (f.limit > 0) return RunWithPermits(f, *session, lost);
  client::AcquireOptions options;
  options.mode = f.mode;
  options.timeout = *ParseDuration(f.timeout);
  options.principal = f.principal;
  options.max_hold = *ParseDuration(f.max_hold);
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
  return CommandExit(f, status, released, lost);
}

// lock NAME --and NAME2 ...: held by a session that outlives this process.
int LockAllAndLeave(const LockFlags& f, client::Client& c,
                    const std::string& session, bool opened) {
  auto r = c.AcquireAll(f.client.ns, session, Specs(f), AllOptions(f));
  if (!r || !r->granted()) {
    if (opened) c.EndSession(session);
  }
  if (!r) return ReportError(r.error(), f.client);
  if (f.client.json) {
    json::object o{
        {"session", session}, {"result", r->result}, {"status", r->status}};
    if (r->granted()) {
      json::array locks;
      for (const auto& l : r->locks) {
        locks.push_back(json::object{
            {"resource", l.resource}, {"mode", l.mode}, {"fence", l.fence}});
      }
      o["locks"] = std::move(locks);
    } else {
      o["resource"] = r->failed_resource;
    }
    PrintJson(o);
  } else if (r->granted()) {
    std::cout << "locked in " << f.client.ns << " (" << f.mode
              << "), fences:" << FenceList(r->locks) << " in session "
              << session << "\nrelease: leasehold unlock NAME --session "
              << session << " --ns " << f.client.ns
              << (opened ? "  (or let the session expire)" : "") << "\n";
  } else {
    std::cerr << "leasehold: locks not granted: " << r->status << " on "
              << r->failed_resource << "; none is held\n";
  }
  return r->granted() ? kExitOk : f.conflict_exit_code;
}

// lock NAME --limit N: permits held by a session that outlives this process.
int PermitsAndLeave(const LockFlags& f, client::Client& c,
                    const std::string& session, bool opened) {
  const client::SemaphoreOptions options = PermitOptions(f);
  auto r = c.AcquireSemaphore(f.client.ns, session, f.name, options);
  if (!r || !r->granted()) {
    if (opened) c.EndSession(session);
  }
  if (!r) return ReportError(r.error(), f.client);
  if (f.client.json) {
    json::object o{
        {"session", session}, {"result", r->result}, {"status", r->status}};
    if (r->granted()) {
      o["fence"] = r->fence;
      o["permits"] = r->permits;
    }
    PrintJson(o);
  } else if (r->granted()) {
    std::cout << "holding " << r->permits << " of " << f.limit << " permits of "
              << f.client.ns << "/" << f.name << " fence " << r->fence
              << " in session " << session << "\nrelease: leasehold unlock "
              << f.name << " --semaphore --session " << session << " --ns "
              << f.client.ns << (opened ? "  (or let the session expire)" : "")
              << "\n";
  } else {
    std::cerr << "leasehold: " << options.permits << " of " << f.limit
              << " permits of " << f.name << " not granted: " << r->status
              << "\n";
  }
  return r->granted() ? kExitOk : f.conflict_exit_code;
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
  if (!f.more_names.empty()) return LockAllAndLeave(f, c, session, opened);
  if (f.limit > 0) return PermitsAndLeave(f, c, session, opened);
  client::AcquireOptions options;
  options.mode = f.mode;
  options.timeout = *ParseDuration(f.timeout);
  options.principal = f.principal;
  options.max_hold = *ParseDuration(f.max_hold);
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

// The combinations of flags `lock` refuses, or "" when they make sense.
std::string MisusedFlags(const LockFlags& f) {
  if (ParseDuration(f.max_hold)->count() < 0) {
    return "--max-hold must be 0 (the namespace's limit) or a duration";
  }
  if (!f.command.empty() && !f.session.empty()) {
    return "--session cannot be used with a COMMAND";
  }
  if (f.permits > 0 && f.limit == 0) {
    return "--permits needs --limit N, the number of permits the semaphore "
           "has";
  }
  if (f.limit == 0) return "";
  if (f.mode_given) {
    return "--mode is for locks; a semaphore (--limit) is held in permits "
           "(--permits)";
  }
  if (!f.more_names.empty()) {
    return "--and takes several locks, not semaphores; drop --limit";
  }
  if (f.permits > f.limit) {
    return "--permits " + std::to_string(f.permits) + " is more than --limit " +
           std::to_string(f.limit) + ": it could never be granted";
  }
  return "";
}

// unlock NAME --semaphore [--permits K]
int GiveBackPermits(const LockFlags& u, client::Client& c) {
  auto left = c.ReleaseSemaphore(u.client.ns, u.session, u.name, "Session",
                                 u.permits, u.principal);
  if (!left) return ReportError(left.error(), u.client);
  if (u.client.json) {
    PrintJson(json::object{{"result", 0}, {"permits", *left}});
  } else {
    std::cout << "released permits of " << u.client.ns << "/" << u.name
              << "; the session holds " << *left << "\n";
  }
  return kExitOk;
}

// unlock NAME
int Unlock(const LockFlags& u, client::Client& c) {
  if (u.semaphore) return GiveBackPermits(u, c);
  auto r = c.Release(u.client.ns, u.session, u.name, "Session", u.principal);
  if (!r) return ReportError(r.error(), u.client);
  if (u.client.json) {
    PrintJson(json::object{{"result", 0}});
  } else {
    std::cout << "released " << u.client.ns << "/" << u.name << "\n";
  }
  return kExitOk;
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
      "LEASEHOLD_LOCK. With --limit N, NAME is a semaphore of N permits "
      "instead, and `lock NAME --limit N --permits K -- COMMAND` holds K of "
      "them while COMMAND runs (so at most N/K such commands run at once); "
      "COMMAND also sees LEASEHOLD_PERMITS. Without COMMAND, the lock stays "
      "with the session "
      "(--session, or a new one that expires after --ttl) until `unlock` "
      "(`unlock --semaphore` for permits). "
      "A wait rides through a restart of the server, or a failover to "
      "another node of a cluster (--url a,b: sessions and locks survive "
      "both): it is asked again once a server serves, within --timeout, "
      "and a grant made just before the break is kept, not taken twice; "
      "with --and, locks taken before the break are given back first, so "
      "the call stays all or nothing. With --timeout 0 (no wait), or a "
      "--session that holds one of the locks already, a restart may exit 3 "
      "instead. While COMMAND runs, the session's keepalives ride through "
      "them too: only a server that says the session is gone makes it "
      "lost.");
  AddClientFlags(lock, f->client);
  lock->add_option("name", f->name, "resource name, e.g. invoice:481")
      ->required();
  lock->add_option("command", f->command, "command to run while locked");
  lock->add_option("--and", f->more_names,
                   "another resource to lock with NAME (repeatable): all are "
                   "taken in one canonical order, all or nothing, within "
                   "one --timeout; COMMAND sees LEASEHOLD_FENCES")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  auto* mode =
      lock->add_option("--mode", f->mode,
                       "Shared, Update, IntentShared, IntentExclusive, "
                       "Exclusive")
          ->capture_default_str();
  lock->add_option("--limit", f->limit,
                   "NAME is a semaphore of this many permits (1..1000000) "
                   "shared by its holders, not a lock; every holder and "
                   "waiter gives the same limit. Without COMMAND, release "
                   "with `unlock NAME --semaphore`")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
  lock->add_option("--permits", f->permits,
                   "with --limit: how many permits to hold (default 1)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
  lock->add_option("--timeout", f->timeout,
                   "longest wait: -1 forever, 0 never wait, or a duration")
      ->check(DurationValidator())
      ->capture_default_str();
  lock->add_option("--max-hold", f->max_hold,
                   "longest hold before the server takes it back (0: the "
                   "namespace's max_hold_ms); with COMMAND, its loss")
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
  lock->callback([f, mode, &code] {
    f->mode_given = mode->count() > 0;
    if (const std::string misuse = MisusedFlags(*f); !misuse.empty()) {
      std::cerr << "leasehold: " << misuse << "\n";
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
      "unlock",
      "Release an application lock taken with `lock NAME`, or with "
      "--semaphore permits taken with `lock NAME --limit N`");
  AddClientFlags(unlock, u->client);
  unlock->add_option("name", u->name, "resource name")->required();
  unlock->add_option("--session", u->session, "the session holding it")
      ->required();
  unlock->add_option("--principal", u->principal, "lock principal")
      ->capture_default_str();
  unlock->add_flag("--semaphore", u->semaphore,
                   "NAME is a semaphore: give back the session's permits");
  unlock
      ->add_option("--permits", u->permits,
                   "with --semaphore: how many to give back (default all)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}));
  unlock->callback([u, &code] {
    if (u->permits > 0 && !u->semaphore) {
      std::cerr << "leasehold: --permits needs --semaphore\n";
      code = kExitUsage;
      return;
    }
    auto c = Connect(u->client);
    code = c ? Unlock(*u, *c) : kExitFailed;
  });
}

}  // namespace leasehold::cli
