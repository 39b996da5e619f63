// `leasehold sessions`, `leasehold locks` and `leasehold semaphores`: who is
// connected, and who holds or waits for which application lock or semaphore.
#include <boost/json.hpp>
#include <iostream>

#include "cli/client_commands.h"
#include "cli/table.h"

namespace leasehold::cli {
namespace {

namespace json = boost::json;

// Runs one listing call of the client (`list`, handed where the answer's
// body goes) and prints the answer as JSON or its outcome through `table`
// (handed the client, to read the server's clock with if it needs it).
template <typename List, typename Print>
void ListCommand(CLI::App& app, int& code, const char* name, const char* help,
                 List list, Print table) {
  auto f = std::make_shared<ClientFlags>();
  auto* cmd = app.add_subcommand(name, help);
  AddClientFlags(cmd, *f);
  cmd->callback([f, &code, list, table] {
    auto c = Connect(*f);
    if (!c) {
      code = kExitFailed;
      return;
    }
    json::value answer;
    auto listed = list(*c, *f, &answer);
    if (!listed) {
      code = ReportError(listed.error(), *f);
      return;
    }
    if (f->json) {
      PrintJson(answer);
    } else {
      table(*listed, *c);
    }
    code = kExitOk;
  });
}

}  // namespace

void AddSessionCommands(CLI::App& app, int& code) {
  ListCommand(
      app, code, "sessions", "List open sessions",
      [](client::Client& c, const ClientFlags&, json::value* answer) {
        return c.ListSessions(answer);
      },
      [](const std::vector<client::SessionInfo>& sessions, client::Client& c) {
        const Time now = ServerNow(c);
        Table t({"ID", "NAME", "EXPIRES", "LOCKS", "WAITING", "TRANSACTION"});
        for (const client::SessionInfo& s : sessions) {
          t.AddRow({s.id, s.name, TimeLeft(s.expires_at, now),
                    std::to_string(s.locks), s.waiting ? "yes" : "",
                    s.transaction ? std::to_string(*s.transaction) : ""});
        }
        t.Print(std::cout);
      });
  ListCommand(
      app, code, "locks",
      "List application locks in a namespace: holders, then waiters in "
      "queue order",
      [](client::Client& c, const ClientFlags& f, json::value* answer) {
        return c.ListLocks(f.ns, answer);
      },
      [](const std::vector<client::LockInfo>& locks, client::Client&) {
        Table t({"RESOURCE", "STATE", "SESSION", "MODE", "OWNER", "COUNT",
                 "SINCE"});
        for (const client::LockInfo& l : locks) {
          std::string resource = l.resource;
          if (l.principal != "public") resource += " (" + l.principal + ")";
          for (const client::LockHolder& g : l.granted) {
            t.AddRow({resource, "granted", g.session_name + " #" + g.session,
                      g.mode, g.owner, std::to_string(g.count), g.since});
          }
          int place = 0;
          for (const client::LockWaiter& w : l.waiting) {
            t.AddRow({resource, "waiting " + std::to_string(++place),
                      w.session_name + " #" + w.session, w.mode, w.owner, "",
                      w.since});
          }
        }
        t.Print(std::cout);
      });
  ListCommand(
      app, code, "semaphores",
      "List semaphores in use in a namespace: holders with their permits, "
      "then waiters in queue order, and permits a lock-delay holds back",
      [](client::Client& c, const ClientFlags& f, json::value* answer) {
        return c.ListSemaphores(f.ns, answer);
      },
      [](const std::vector<client::SemaphoreInfo>& semaphores,
         client::Client&) {
        Table t(
            {"NAME", "LIMIT", "STATE", "SESSION", "PERMITS", "OWNER", "SINCE"});
        for (const client::SemaphoreInfo& s : semaphores) {
          std::string name = s.name;
          if (s.principal != "public") name += " (" + s.principal + ")";
          const std::string limit = std::to_string(s.limit);
          for (const client::SemaphoreHolder& h : s.holders) {
            t.AddRow({name, limit, "granted", h.session_name + " #" + h.session,
                      std::to_string(h.permits), h.owner, h.since});
          }
          int place = 0;
          for (const client::SemaphoreWaiter& w : s.waiting) {
            t.AddRow({name, limit,
                      "waiting " + std::to_string(++place) +
                          (w.conversion ? " (more)" : ""),
                      w.session_name + " #" + w.session,
                      std::to_string(w.permits), w.owner, w.since});
          }
          if (s.lock_delay_permits > 0) {
            t.AddRow({name, limit, "lock-delay", "",
                      std::to_string(s.lock_delay_permits), "",
                      "until " + s.lock_delay_until});
          }
        }
        t.Print(std::cout);
      });
}

}  // namespace leasehold::cli
