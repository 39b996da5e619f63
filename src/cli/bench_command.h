// `leasehold bench`: the load generator's command line (src/loadgen).
#ifndef LEASEHOLD_CLI_BENCH_COMMAND_H_
#define LEASEHOLD_CLI_BENCH_COMMAND_H_

namespace CLI {
class App;
}

namespace leasehold::cli {

// Adds the `bench` subcommand to `app`; when it runs, it sets `exit_code`:
// 0 when every request got an expected answer, 1 otherwise (or when the
// server could not be reached or spawned), 2 for a bad option value.
void AddBenchCommand(CLI::App& app, int& exit_code);

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_BENCH_COMMAND_H_
