// Records and checkouts from a shell: put, get, ls, checkout, save, checkin,
// delete, purge, break. Each is one API call; --json prints the server's
// answer as it came.
#include <boost/json.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/client_commands.h"
#include "cli/table.h"
#include "client/api_codec.h"

namespace leasehold::cli {
namespace {

namespace json = boost::json;
using client::api::AddQuery;
using client::api::RecordPath;

struct RecordFlags {
  ClientFlags client;
  std::string key, owner, token, body, body_file;
  std::string ttl = "5m";
  std::string state, prefix, after;
  std::string older_than = "0";
  int limit = 0;
  std::int64_t if_version = -1;
};

struct Rendered {
  int code = kExitOk;
  std::string text;
};

std::string Str(const json::value& v, std::string_view field) {
  const json::value* f =
      v.is_object() ? v.as_object().if_contains(field) : nullptr;
  if (f == nullptr || f->is_null()) return "";
  if (f->is_string()) return std::string(f->as_string());
  return json::serialize(*f);
}

bool Flag(const json::value& v, std::string_view field) {
  const json::value* f = v.as_object().if_contains(field);
  return f != nullptr && f->is_bool() && f->as_bool();
}

// One call: the answer as JSON with --json, else `render`'s text.
int Exchange(const ClientFlags& f, std::string_view method,
             const std::string& target, const json::value* body,
             std::vector<unsigned> accept,
             const std::function<Rendered(const json::value&)>& render) {
  auto c = Connect(f);
  if (!c) return kExitFailed;
  auto answer = c->Call(method, target, body, std::move(accept));
  if (!answer) return ReportError(answer.error(), f);
  Rendered r = render(*answer);
  if (f.json) {
    PrintJson(*answer);
  } else {
    (r.code == kExitOk ? std::cout : std::cerr) << r.text << "\n";
  }
  return r.code;
}

std::string Target(const RecordFlags& f, std::string_view action = "") {
  return RecordPath(f.client.ns, f.key, action);
}

// The body from --body or --body-file ("-" reads stdin).
std::optional<std::string> Body(const RecordFlags& f) {
  if (f.body_file.empty()) return f.body;
  std::stringstream text;
  if (f.body_file == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(f.body_file, std::ios::binary);
    if (!in) {
      std::cerr << "leasehold: cannot read " << f.body_file << "\n";
      return std::nullopt;
    }
    text << in.rdbuf();
  }
  return text.str();
}

json::object Proof(const RecordFlags& f) {
  json::object o;
  if (!f.token.empty()) o["token"] = f.token;
  if (!f.owner.empty()) o["owner"] = f.owner;
  return o;
}

// "locked by Asha, 4:12 left" or "free (last: Asha)".
std::string Holder(const json::value& r) {
  const std::string by = Str(r, "locked_by");
  if (Str(r, "state") == "locked") {
    return "locked by " + by + ", " + TimeLeft(Str(r, "lock_expires_at"));
  }
  return by.empty() ? "free" : "free (last: " + by + ")";
}

Rendered Refusal(const json::value& a, const RecordFlags& f,
                 std::string_view done_field, std::string done_text) {
  if (Flag(a, done_field)) return {kExitOk, std::move(done_text)};
  return {kExitRefused, "refused: " + Str(a, "reason") + " (" + f.client.ns +
                            "/" + f.key + ")"};
}

void AddKeyCommand(
    CLI::App& app, int& code, const char* name, const char* help, bool proof,
    bool body, const std::function<int(const RecordFlags&)>& run,
    const std::function<void(CLI::App*, RecordFlags&)>& more = {}) {
  auto f = std::make_shared<RecordFlags>();
  auto* cmd = app.add_subcommand(name, help);
  AddClientFlags(cmd, f->client);
  cmd->add_option("key", f->key, "record key")->required();
  if (proof) {
    auto* owner =
        cmd->add_option("--owner", f->owner, "the holder's name (proof)");
    auto* token = cmd->add_option("--token", f->token,
                                  "the lease token from checkout (proof)");
    owner->excludes(token);
  }
  if (body) {
    auto* b = cmd->add_option("--body", f->body, "the record's text");
    auto* bf = cmd->add_option("--body-file", f->body_file,
                               "read the text from a file (- for stdin)");
    b->excludes(bf);
  }
  if (more) more(cmd, *f);
  cmd->callback([f, &code, run, proof, name] {
    if (proof && f->owner.empty() && f->token.empty() &&
        std::string(name) != "checkout") {
      std::cerr << "leasehold: " << name
                << " needs --owner NAME or --token TOKEN\n";
      code = kExitUsage;
      return;
    }
    code = run(*f);
  });
}

}  // namespace

void AddRecordCommands(CLI::App& app, int& code) {
  AddKeyCommand(
      app, code, "put", "Create a record (refused if the key exists)", false,
      true, [](const RecordFlags& f) {
        auto text = Body(f);
        if (!text) return static_cast<int>(kExitFailed);
        const json::value body = json::object{{"body", *text}};
        return Exchange(
            f.client, "PUT", Target(f), &body, {}, [&](const json::value& a) {
              return Rendered{kExitOk, "created " + f.key + ", version " +
                                           Str(a, "version")};
            });
      });

  AddKeyCommand(app, code, "get", "Show a record and who holds it", false,
                false, [](const RecordFlags& f) {
                  return Exchange(f.client, "GET", Target(f), nullptr, {},
                                  [](const json::value& a) {
                                    std::string text =
                                        Str(a, "key") + "  " + Holder(a) +
                                        "  version " + Str(a, "version") +
                                        "  fence " + Str(a, "fence");
                                    if (!Str(a, "body").empty()) {
                                      text += "\n" + Str(a, "body");
                                    }
                                    return Rendered{kExitOk, text};
                                  });
                });

  AddKeyCommand(
      app, code, "checkout",
      "Check a key out (a visible lease): granted, renewed if already yours, "
      "or refused naming the holder",
      true, false,
      [](const RecordFlags& f) {
        if (f.owner.empty()) {
          std::cerr << "leasehold: checkout needs --owner NAME\n";
          return static_cast<int>(kExitUsage);
        }
        json::object body{{"owner", f.owner},
                          {"ttl_ms", ParseDuration(f.ttl)->count()}};
        if (!f.token.empty()) body["token"] = f.token;
        const json::value v = body;
        return Exchange(
            f.client, "POST", Target(f, "checkout"), &v, {423},
            [&](const json::value& a) {
              if (!Flag(a, "granted")) {
                return Rendered{kExitRefused,
                                f.key + " is held by " + Str(a, "locked_by") +
                                    ", " + TimeLeft(Str(a, "lock_expires_at"))};
              }
              return Rendered{
                  kExitOk, std::string(Flag(a, "renewed") ? "renewed "
                                                          : "checked out ") +
                               f.key + " as " + f.owner + ", " +
                               TimeLeft(Str(a, "expires_at")) + "\ntoken " +
                               Str(a, "token") + "  fence " + Str(a, "fence")};
            });
      },
      [](CLI::App* cmd, RecordFlags& f) {
        cmd->add_option("--ttl", f.ttl, "lease length")
            ->check(DurationValidator())
            ->capture_default_str();
      });

  AddKeyCommand(
      app, code, "save", "Save a record under your unexpired lease", true, true,
      [](const RecordFlags& f) {
        auto text = Body(f);
        if (!text) return static_cast<int>(kExitFailed);
        json::object body = Proof(f);
        body["body"] = *text;
        if (f.if_version >= 0) body["if_version"] = f.if_version;
        const json::value v = body;
        return Exchange(f.client, "POST", Target(f, "save"), &v, {412, 423},
                        [&](const json::value& a) {
                          return Refusal(a, f, "saved",
                                         "saved " + f.key + ", version " +
                                             Str(a, "version"));
                        });
      },
      [](CLI::App* cmd, RecordFlags& f) {
        cmd->add_option("--if-version", f.if_version,
                        "save only if the record is at this version");
      });

  AddKeyCommand(app, code, "checkin", "Give a checkout back", true, false,
                [](const RecordFlags& f) {
                  const json::value v = Proof(f);
                  return Exchange(f.client, "POST", Target(f, "checkin"), &v,
                                  {423}, [&](const json::value& a) {
                                    return Refusal(a, f, "released",
                                                   "checked in " + f.key);
                                  });
                });

  AddKeyCommand(app, code, "delete", "Delete a record under your lease", true,
                false, [](const RecordFlags& f) {
                  const json::value v = Proof(f);
                  return Exchange(f.client, "DELETE", Target(f), &v, {423},
                                  [&](const json::value& a) {
                                    return Refusal(a, f, "deleted",
                                                   "deleted " + f.key);
                                  });
                });

  AddKeyCommand(
      app, code, "break", "Force a checkout free (administrators)", false,
      false, [](const RecordFlags& f) {
        return Exchange(
            f.client, "POST", Target(f, "break"), nullptr, {},
            [&](const json::value& a) {
              return Flag(a, "broken")
                         ? Rendered{kExitOk, "broke the lease on " + f.key}
                         : Rendered{kExitRefused, f.key + " had no lease"};
            });
      });

  auto ls = std::make_shared<RecordFlags>();
  auto* ls_cmd = app.add_subcommand(
      "ls", "List records and checkouts: who holds what, and for how long");
  AddClientFlags(ls_cmd, ls->client);
  ls_cmd->add_option("--state", ls->state, "locked or free")
      ->check(CLI::IsMember({"locked", "free"}));
  ls_cmd->add_option("--prefix", ls->prefix, "keys starting with this");
  ls_cmd->add_option("--after", ls->after, "keys after this one (paging)");
  ls_cmd->add_option("--limit", ls->limit,
                     "one page of at most this many (default: all pages)");
  ls_cmd->callback([ls, &code] {
    auto c = Connect(ls->client);
    if (!c) {
      code = kExitFailed;
      return;
    }
    Table table({"KEY", "STATE", "HOLDER", "EXPIRES", "VERSION"});
    std::string after = ls->after;
    for (;;) {
      std::string target = client::api::RecordsPath(ls->client.ns);
      if (!ls->state.empty()) AddQuery(target, "state", ls->state);
      if (!ls->prefix.empty()) AddQuery(target, "prefix", ls->prefix);
      if (!after.empty()) AddQuery(target, "after", after);
      if (ls->limit > 0) AddQuery(target, "limit", std::to_string(ls->limit));
      auto page = c->Call("GET", target);
      if (!page) {
        code = ReportError(page.error(), ls->client);
        return;
      }
      if (ls->client.json) {  // one page, exactly as the server sent it
        PrintJson(*page);
        code = kExitOk;
        return;
      }
      for (const json::value& r : page->at("records").as_array()) {
        const bool locked = Str(r, "state") == "locked";
        table.AddRow({Str(r, "key"), Str(r, "state"), Str(r, "locked_by"),
                      locked ? TimeLeft(Str(r, "lock_expires_at")) : "",
                      Str(r, "version")});
      }
      after = Str(*page, "next");
      if (after.empty() || ls->limit > 0) break;
    }
    table.Print(std::cout);
    code = kExitOk;
  });

  auto purge = std::make_shared<RecordFlags>();
  auto* purge_cmd = app.add_subcommand(
      "purge",
      "Clear leases that expired longer ago than --older-than "
      "(administrators)");
  AddClientFlags(purge_cmd, purge->client);
  purge_cmd->add_option("--older-than", purge->older_than, "a duration")
      ->check(DurationValidator())
      ->capture_default_str();
  purge_cmd->callback([purge, &code] {
    const json::value body = json::object{
        {"older_than_ms", ParseDuration(purge->older_than)->count()}};
    code = Exchange(
        purge->client, "POST",
        client::api::RecordsPath(purge->client.ns, "purge"), &body, {},
        [](const json::value& a) {
          return Rendered{kExitOk, "purged " + Str(a, "purged") + " leases"};
        });
  });
}

}  // namespace leasehold::cli
