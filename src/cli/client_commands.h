// The client subcommands of `leasehold`, one group per file: each Add*
// registers its subcommands on `app` and sets `code` to the exit code of
// the one that ran (see ExitCode in client_flags.h).
#ifndef LEASEHOLD_CLI_CLIENT_COMMANDS_H_
#define LEASEHOLD_CLI_CLIENT_COMMANDS_H_

#include <CLI/CLI.hpp>

#include "cli/client_flags.h"

namespace leasehold::cli {

void AddLockCommands(CLI::App& app, int& code);     // lock, unlock
void AddRecordCommands(CLI::App& app, int& code);   // put, get, ls, checkout,
                                                    // save, checkin, delete,
                                                    // purge, break
void AddSessionCommands(CLI::App& app, int& code);  // sessions, locks,
                                                    // semaphores
void AddWatchCommand(CLI::App& app, int& code);     // watch
void AddBackupCommand(CLI::App& app, int& code);    // backup
// race; and expiry, checkin under `demo`: moved to leasehold-peers, they
// only say so
void AddRaceCommands(CLI::App& app, CLI::App* demo, int& code);

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_CLIENT_COMMANDS_H_
