// `leasehold sessions` and `leasehold locks`: who is connected, and who
// holds or waits for which application lock.
#include <boost/json.hpp>
#include <iostream>

#include "cli/client_commands.h"
#include "cli/table.h"
#include "client/api_codec.h"

namespace leasehold::cli {
namespace {

namespace json = boost::json;

std::string Text(const json::value& v, std::string_view field) {
  const json::value* f = v.as_object().if_contains(field);
  if (f == nullptr || f->is_null()) return "";
  return f->is_string() ? std::string(f->as_string()) : json::serialize(*f);
}

// Runs GET `target` and prints it as JSON or through `table`.
void ListCommand(CLI::App& app, int& code, const char* name, const char* help,
                 std::function<std::string(const ClientFlags&)> target,
                 std::function<void(const json::value&)> table) {
  auto f = std::make_shared<ClientFlags>();
  auto* cmd = app.add_subcommand(name, help);
  AddClientFlags(cmd, *f);
  cmd->callback([f, &code, target, table] {
    auto c = Connect(*f);
    if (!c) {
      code = kExitFailed;
      return;
    }
    auto answer = c->Call("GET", target(*f));
    if (!answer) {
      code = ReportError(answer.error(), *f);
      return;
    }
    if (f->json) {
      PrintJson(*answer);
    } else {
      table(*answer);
    }
    code = kExitOk;
  });
}

}  // namespace

void AddSessionCommands(CLI::App& app, int& code) {
  ListCommand(
      app, code, "sessions", "List open sessions",
      [](const ClientFlags&) { return std::string("/v1/sessions"); },
      [](const json::value& a) {
        Table t({"ID", "NAME", "EXPIRES", "LOCKS", "WAITING", "TRANSACTION"});
        for (const json::value& s : a.at("sessions").as_array()) {
          const json::value& txn = s.at("transaction");
          t.AddRow({Text(s, "id"), Text(s, "name"),
                    TimeLeft(Text(s, "expires_at")), Text(s, "locks"),
                    Text(s, "waiting") == "true" ? "yes" : "",
                    txn.is_object() ? Text(txn, "transaction") : ""});
        }
        t.Print(std::cout);
      });
  ListCommand(
      app, code, "locks",
      "List application locks in a namespace: holders, then waiters in "
      "queue order",
      [](const ClientFlags& f) { return client::api::ApplockPath(f.ns); },
      [](const json::value& a) {
        Table t({"RESOURCE", "STATE", "SESSION", "MODE", "OWNER", "COUNT",
                 "SINCE"});
        for (const json::value& l : a.at("locks").as_array()) {
          std::string resource = Text(l, "resource");
          if (Text(l, "principal") != "public") {
            resource += " (" + Text(l, "principal") + ")";
          }
          for (const json::value& g : l.at("granted").as_array()) {
            t.AddRow({resource, "granted",
                      Text(g, "session_name") + " #" + Text(g, "session"),
                      Text(g, "mode"), Text(g, "owner"), Text(g, "count"),
                      Text(g, "since")});
          }
          int place = 0;
          for (const json::value& w : l.at("waiting").as_array()) {
            t.AddRow({resource, "waiting " + std::to_string(++place),
                      Text(w, "session_name") + " #" + Text(w, "session"),
                      Text(w, "mode"), Text(w, "owner"), "", Text(w, "since")});
          }
        }
        t.Print(std::cout);
      });
}

}  // namespace leasehold::cli
