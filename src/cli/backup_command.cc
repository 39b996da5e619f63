// `leasehold backup OUT`: a running server's snapshot (GET /v1/admin/backup)
// saved to OUT through the client library, whole or not at all.
#include <boost/json.hpp>
#include <iostream>

#include "cli/client_commands.h"

namespace leasehold::cli {

void AddBackupCommand(CLI::App& app, int& code) {
  struct BackupFlags {
    ClientFlags client;
    std::string out;
    bool force = false;
  };
  auto f = std::make_shared<BackupFlags>();
  auto* cmd = app.add_subcommand(
      "backup",
      "Save a consistent snapshot of a running server's data to OUT, without "
      "stopping it (SQLite store; needs an admin token for every namespace). "
      "OUT is written as OUT.tmp, synced, then renamed; restore it by "
      "stopping the server and putting it at DIR/leasehold.db (README, "
      "\"Backup and restore\")");
  AddClientFlags(cmd, f->client);
  cmd->add_option("OUT", f->out, "the file to write")->required();
  cmd->add_flag("-f,--force", f->force, "replace OUT if it exists");
  cmd->callback([f, &code] {
    auto c = Connect(f->client);
    if (!c) {
      code = kExitFailed;
      return;
    }
    auto written = c->Backup(f->out, {.overwrite = f->force});
    if (!written) {
      code = ReportError(written.error(), f->client);
      return;
    }
    if (f->client.json) {
      PrintJson(boost::json::object{{"file", f->out}, {"bytes", *written}});
    } else {
      std::cout << "saved a snapshot to " << f->out << " (" << *written
                << " bytes)\n";
    }
    code = kExitOk;
  });
}

}  // namespace leasehold::cli
