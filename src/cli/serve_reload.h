// What a reload of `serve`'s --config file (SIGHUP, POST /v1/admin/reload)
// may change while the server runs: the options ConfigOptions() marks
// live (tokens, and a namespace's options except "locks"). A config that
// changes anything else is refused whole, naming each option that needs a
// restart: the file then no longer says what runs, and applying half of it
// would leave the operator guessing which half.
#ifndef LEASEHOLD_CLI_SERVE_RELOAD_H_
#define LEASEHOLD_CLI_SERVE_RELOAD_H_

#include <string>
#include <utility>
#include <vector>

#include "cli/serve_config.h"

namespace leasehold::cli {

// OK when `next` differs from `running` in live options only; else
// kBadRequest: "… needs a restart" for each option that differs.
Status CheckLiveChange(const ServeConfig& running, const ServeConfig& next);

// The namespace options that make the engine run by `next`: each of its
// namespaces, and the defaults for a namespace `running` configured and
// `next` no longer does.
std::vector<std::pair<std::string, NamespaceOptions>> NamespaceChanges(
    const ServeConfig& running, const ServeConfig& next);

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_SERVE_RELOAD_H_
