// Records and checkouts from a shell: put, get, ls, checkout, save, checkin,
// delete, purge, break. Each is one call of the C++ client; --json prints the
// server's answer as it came.
#include <boost/json.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/client_commands.h"
#include "cli/table.h"

namespace leasehold::cli {
namespace {

namespace json = boost::json;

struct RecordFlags {
  ClientFlags client;
  std::string key, owner, token, body, body_file;
  std::string ttl = "5m";
  std::string state, prefix, after;
  std::string older_than = "0";
  int limit = 0;
  std::int64_t if_version = -1;
  std::uint64_t fence = 0;  // a fenced write's; 0: none
};

struct Rendered {
  int code = kExitOk;
  std::string text;
};

// One call through the client: `call` makes it (handing on where the
// answer's body goes), `render` words its outcome. With --json the answer
// is printed as it came, else the words (stderr when the code is not 0).
template <typename Call, typename Render>
int Exchange(const ClientFlags& f, Call call, Render render) {
  auto c = Connect(f);
  if (!c) return kExitFailed;
  json::value answer;
  auto outcome = call(*c, &answer);
  if (!outcome) return ReportError(outcome.error(), f);
  Rendered r = render(*outcome);
  if (f.json) {
    PrintJson(answer);
  } else {
    (r.code == kExitOk ? std::cout : std::cerr) << r.text << "\n";
  }
  return r.code;
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

client::Proof ProofOf(const RecordFlags& f) {
  return {f.owner, f.token, f.fence};
}

// --fence N on put, save and delete (docs/api.md, "Fenced writes").
void AddFenceOption(CLI::App* cmd, RecordFlags& f) {
  cmd->add_option("--fence", f.fence,
                  "a fenced write: the fence of a lock or semaphore grant you "
                  "hold; refused (stale_fence) once a higher fence has "
                  "written the record")
      ->check(CLI::PositiveNumber);
}

// `outcome`, having read the server's clock into `now` when its words will
// say how long a lease has left (the call succeeded, and no --json).
template <typename Outcome>
Outcome NoteServerNow(Outcome outcome, client::Client& c, const ClientFlags& f,
                      Time& now) {
  if (outcome && !f.json) now = ServerNow(c);
  return outcome;
}

// "locked by Asha, 4:12 left" or "free (last: Asha)".
std::string Holder(const client::RecordInfo& r, Time now) {
  const std::string by = r.locked_by.value_or("");
  if (r.state == "locked") {
    return "locked by " + by + ", " +
           TimeLeft(r.lock_expires_at.value_or(""), now);
  }
  return by.empty() ? "free" : "free (last: " + by + ")";
}

Rendered Refusal(const client::WriteOutcome& w, const RecordFlags& f,
                 std::string done_text) {
  if (w.done) return {kExitOk, std::move(done_text)};
  return {kExitRefused,
          "refused: " + w.reason + " (" + f.client.ns + "/" + f.key + ")"};
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
    const std::string command = name;
    if (proof && f->owner.empty() && f->token.empty() && f->fence == 0 &&
        command != "checkout") {
      std::cerr << "leasehold: " << name
                << (command == "checkin"
                        ? " needs --owner NAME or --token TOKEN\n"
                        : " needs --owner NAME, --token TOKEN or --fence N\n");
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
      true,
      [](const RecordFlags& f) {
        auto text = Body(f);
        if (!text) return static_cast<int>(kExitFailed);
        return Exchange(
            f.client,
            [&](client::Client& c, json::value* a) {
              return c.Put(f.client.ns, f.key, *text, f.fence, a);
            },
            [&](std::int64_t version) {
              return Rendered{kExitOk, "created " + f.key + ", version " +
                                           std::to_string(version)};
            });
      },
      AddFenceOption);

  AddKeyCommand(
      app, code, "get", "Show a record and who holds it", false, false,
      [](const RecordFlags& f) {
        Time now{};
        return Exchange(
            f.client,
            [&](client::Client& c, json::value* a) {
              return NoteServerNow(c.Get(f.client.ns, f.key, a), c, f.client,
                                   now);
            },
            [&](const client::RecordInfo& r) {
              std::string text = r.key + "  " + Holder(r, now) + "  version " +
                                 std::to_string(r.version) + "  fence " +
                                 std::to_string(r.fence);
              if (r.write_fence != 0) {
                text += "  write fence " + std::to_string(r.write_fence);
              }
              if (!r.body.value_or("").empty()) text += "\n" + *r.body;
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
        const client::CheckoutOptions options{
            .owner = f.owner, .ttl = *ParseDuration(f.ttl), .token = f.token};
        Time now{};
        return Exchange(
            f.client,
            [&](client::Client& c, json::value* a) {
              return NoteServerNow(c.Checkout(f.client.ns, f.key, options, a),
                                   c, f.client, now);
            },
            [&](const client::CheckoutOutcome& o) {
              if (!o.granted) {
                return Rendered{kExitRefused, f.key + " is held by " +
                                                  o.locked_by + ", " +
                                                  TimeLeft(o.expires_at, now)};
              }
              return Rendered{
                  kExitOk,
                  std::string(o.renewed ? "renewed " : "checked out ") + f.key +
                      " as " + f.owner + ", " + TimeLeft(o.expires_at, now) +
                      "\ntoken " + o.token + "  fence " +
                      std::to_string(o.fence)};
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
        std::optional<std::int64_t> if_version;
        if (f.if_version >= 0) if_version = f.if_version;
        return Exchange(
            f.client,
            [&](client::Client& c, json::value* a) {
              return c.Save(f.client.ns, f.key, ProofOf(f), *text, if_version,
                            a);
            },
            [&](const client::WriteOutcome& w) {
              return Refusal(
                  w, f,
                  "saved " + f.key + ", version " + std::to_string(w.version));
            });
      },
      [](CLI::App* cmd, RecordFlags& f) {
        cmd->add_option("--if-version", f.if_version,
                        "save only if the record is at this version");
        AddFenceOption(cmd, f);
      });

  AddKeyCommand(app, code, "checkin", "Give a checkout back", true, false,
                [](const RecordFlags& f) {
                  return Exchange(
                      f.client,
                      [&](client::Client& c, json::value* a) {
                        return c.Checkin(f.client.ns, f.key, ProofOf(f), a);
                      },
                      [&](const client::WriteOutcome& w) {
                        return Refusal(w, f, "checked in " + f.key);
                      });
                });

  AddKeyCommand(
      app, code, "delete", "Delete a record under your lease", true, false,
      [](const RecordFlags& f) {
        return Exchange(
            f.client,
            [&](client::Client& c, json::value* a) {
              return c.Delete(f.client.ns, f.key, ProofOf(f), a);
            },
            [&](const client::WriteOutcome& w) {
              return Refusal(w, f, "deleted " + f.key);
            });
      },
      AddFenceOption);

  AddKeyCommand(
      app, code, "break", "Force a checkout free (administrators)", false,
      false, [](const RecordFlags& f) {
        return Exchange(
            f.client,
            [&](client::Client& c, json::value* a) {
              return c.Break(f.client.ns, f.key, a);
            },
            [&](bool broken) {
              return broken ? Rendered{kExitOk, "broke the lease on " + f.key}
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
    client::ListOptions options{.state = ls->state,
                                .prefix = ls->prefix,
                                .after = ls->after,
                                .limit = ls->limit};
    for (;;) {
      json::value answer;
      auto page = c->List(ls->client.ns, options, &answer);
      if (!page) {
        code = ReportError(page.error(), ls->client);
        return;
      }
      if (ls->client.json) {  // one page, exactly as the server sent it
        PrintJson(answer);
        code = kExitOk;
        return;
      }
      const Time now = ServerNow(*c);
      for (const client::RecordInfo& r : page->records) {
        const bool locked = r.state == "locked";
        table.AddRow(
            {r.key, r.state, r.locked_by.value_or(""),
             locked ? TimeLeft(r.lock_expires_at.value_or(""), now) : "",
             std::to_string(r.version)});
      }
      options.after = page->next.value_or("");
      if (options.after.empty() || ls->limit > 0) break;
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
    code = Exchange(
        purge->client,
        [&](client::Client& c, json::value* a) {
          return c.Purge(purge->client.ns, *ParseDuration(purge->older_than),
                         a);
        },
        [](std::int64_t purged) {
          return Rendered{kExitOk,
                          "purged " + std::to_string(purged) + " leases"};
        });
  });
}

}  // namespace leasehold::cli
