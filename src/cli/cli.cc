#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace leasehold::cli {

int Main(int argc, char** argv) {
  CLI::App app{
      "leasehold: who is working on what, safely and visibly.\n"
      "Exit codes: 0 success; 1 a demo step did not behave as expected; "
      "2 usage error."};
  app.require_subcommand(1);
  auto* demo = app.add_subcommand(
      "demo",
      "Walk through the lock engine: two sessions contending, a conversion, "
      "a deadlock found and reported, a timeout and a session expiry");
  int code = 0;
  demo->callback([&] { code = RunDemo(std::cout); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return code;
}

}  // namespace leasehold::cli
