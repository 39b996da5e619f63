// `leasehold watch`: the server's events as they happen, one line each.
#include <boost/json.hpp>
#include <iostream>

#include "cli/client_commands.h"

namespace leasehold::cli {
namespace {

namespace json = boost::json;

std::string Field(const json::value& v, std::string_view name) {
  const json::value* f =
      v.is_object() ? v.as_object().if_contains(name) : nullptr;
  if (f == nullptr || f->is_null()) return "";
  return f->is_string() ? std::string(f->as_string()) : json::serialize(*f);
}

// "12:04:31.250  checkout.granted  docs/note-17  Asha  until 12:09:31.250"
std::string Line(const client::Event& e) {
  const json::value& d = e.data;
  std::string at = Field(d, "at");
  if (at.size() >= 23) at = at.substr(11, 12);
  std::string what = Field(d, "ns");
  if (!Field(d, "resource").empty()) what += "/" + Field(d, "resource");
  std::string who = Field(d, "holder");
  if (who.empty()) who = Field(d, "session_name");
  std::string line = at + "  " + e.type;
  if (!what.empty()) line += "  " + what;
  if (!who.empty()) line += "  " + who;
  if (!Field(d, "mode").empty()) line += "  " + Field(d, "mode");
  std::string until = Field(d, "until");
  if (until.size() >= 23) line += "  until " + until.substr(11, 12);
  return line;
}

}  // namespace

void AddWatchCommand(CLI::App& app, int& code) {
  struct WatchFlags {
    ClientFlags client;
    bool all = false;
    long long count = 0;
  };
  auto f = std::make_shared<WatchFlags>();
  auto* cmd = app.add_subcommand(
      "watch",
      "Print events as they happen (--json: one JSON object per line)");
  AddClientFlags(cmd, f->client);
  cmd->add_flag("-A,--all-namespaces", f->all, "events of every namespace");
  cmd->add_option("--count", f->count, "stop after this many events");
  cmd->callback([f, &code] {
    auto c = Connect(f->client);
    if (!c) {
      code = kExitFailed;
      return;
    }
    long long seen = 0;
    auto done =
        c->Watch(f->all ? "" : f->client.ns, [&](const client::Event& e) {
          if (f->client.json) {
            PrintJson(json::object{{"type", e.type}, {"data", e.data}});
          } else {
            std::cout << Line(e) << "\n";
          }
          std::cout.flush();
          return f->count == 0 || ++seen < f->count;
        });
    code = done ? kExitOk : ReportError(done.error(), f->client);
  });
}

}  // namespace leasehold::cli
