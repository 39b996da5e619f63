// The subcommands of `leasehold-peers`, the tool that drives other systems
// beside a leasehold server (src/peers). Each Add* registers its commands
// on `app` and sets `code` to the exit code of the one that ran.
#ifndef LEASEHOLD_PEERS_CLI_COMMANDS_H_
#define LEASEHOLD_PEERS_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace leasehold::peers_cli {

// race; and expiry, checkin under `demo` (seed 000). Exit codes: 0 done, 1
// a walkthrough step did not answer as the article shows, 2 usage error
// (also a target without documents, or naive on leasehold), 3 a call
// failed.
void AddRaceCommands(CLI::App& app, CLI::App* demo, int& code);
// bench --target URL: 0 when every operation got an expected answer, 1
// otherwise (or when the peer could not be reached), 2 for a bad option.
void AddBenchCommand(CLI::App& app, int& code);

}  // namespace leasehold::peers_cli

#endif  // LEASEHOLD_PEERS_CLI_COMMANDS_H_
