// RunChild: runs a command as `lock NAME -- COMMAND` does, the way a shell
// would, and reports its status the way a shell does.
#ifndef LEASEHOLD_CLI_CHILD_PROCESS_H_
#define LEASEHOLD_CLI_CHILD_PROCESS_H_

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace leasehold::cli {

// Starts argv[0] (found on PATH) with the rest of argv and the environment
// plus `extra_env`, forwards SIGINT, SIGTERM and SIGHUP to it while it runs,
// and waits. Returns its exit status, or 128+N when signal N ended it. An
// error (with errno's message) when it cannot be started.
Result<int> RunChild(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& extra_env);

// Sends SIGTERM to the running child, if any. Async-signal-safe.
void TerminateChild();

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_CHILD_PROCESS_H_
