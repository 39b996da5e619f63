// The `leasehold` command line: parses arguments and runs a subcommand.
#ifndef LEASEHOLD_CLI_CLI_H_
#define LEASEHOLD_CLI_CLI_H_

#include <iosfwd>

namespace leasehold::cli {

// Runs the command line; returns the process exit code (see --help).
int Main(int argc, char** argv);

// `leasehold demo`: a scripted walkthrough of the lock engine, printed to
// `out`. Returns 0 when every step behaved as the script expects.
int RunDemo(std::ostream& out);

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_CLI_H_
