// `leasehold-peers`: leasehold beside the systems people already use for
// locks — seed 000's checkout race and walkthroughs, and the peer
// benchmarks. A binary of its own so that the server links only what it
// serves with (no hiredis, no libpq).
#include <CLI/CLI.hpp>

#include "peers_cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "leasehold-peers: a leasehold server beside SQLite, PostgreSQL, Redis "
      "and etcd: seed 000's checkout race (race, demo expiry|checkin) and "
      "the peer benchmarks (bench --target)."};
  app.require_subcommand(1);
  auto* demo = app.add_subcommand(
      "demo", "Seed 000's walkthroughs as step tables (expiry, checkin)");
  demo->require_subcommand(1);
  int code = 0;
  leasehold::peers_cli::AddRaceCommands(app, demo, code);
  leasehold::peers_cli::AddBenchCommand(app, code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return code;
}
