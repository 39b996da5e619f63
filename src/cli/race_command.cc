// `leasehold race` and `leasehold demo expiry|checkin` moved to the
// `leasehold-peers` tool with the systems they run on (SQLite, PostgreSQL,
// a leasehold server): the server binary links only what it serves with.
// These commands remain only to say where they went.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/client_commands.h"

namespace leasehold::cli {
namespace {

// A subcommand that takes any arguments and answers with the command line
// to run instead (exit kExitUsage).
void AddMoved(CLI::App* parent, const std::string& name,
              const std::string& command, int& code) {
  auto* moved = parent->add_subcommand(
      name, "moved: run `leasehold-peers " + command + " …`");
  moved->prefix_command();
  moved->callback([moved, command, &code] {
    std::string rest;
    for (const std::string& arg : moved->remaining()) rest += " " + arg;
    std::cerr << "leasehold: `" << command
              << "` is in the leasehold-peers tool now (it links the SQLite, "
                 "PostgreSQL and Redis clients, which the server does not): "
                 "run `leasehold-peers "
              << command << rest << "`\n";
    code = kExitUsage;
  });
}

}  // namespace

void AddRaceCommands(CLI::App& app, CLI::App* demo, int& code) {
  AddMoved(&app, "race", "race", code);
  AddMoved(demo, "expiry", "demo expiry", code);
  AddMoved(demo, "checkin", "demo checkin", code);
}

}  // namespace leasehold::cli
