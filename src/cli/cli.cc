#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/bench_command.h"
#include "cli/client_commands.h"
#include "cli/serve.h"
#include "common/version.h"

namespace leasehold::cli {

int Main(int argc, char** argv) {
  CLI::App app{
      "leasehold: who is working on what, safely and visibly.\n"
      "serve and demo exit 0 on success, 1 on failure (the server could not "
      "start, or a demo step did not behave as expected), 2 on a usage "
      "error.\n" +
      std::string(kExitCodesHelp)};
  app.footer(kExitCodesHelp);
  app.set_version_flag("--version", "leasehold " + std::string(Version()));
  app.require_subcommand(1);
  auto* demo = app.add_subcommand(
      "demo",
      "Walk through the lock engine: two sessions contending, a conversion, "
      "a deadlock found and reported, a timeout and a session expiry");
  int code = 0;
  // `demo` alone is the engine walkthrough; `demo expiry|checkin` are
  // seed 000's, added by AddRaceCommands.
  demo->callback([&] {
    if (demo->get_subcommands().empty()) code = RunDemo(std::cout);
  });

  ServeFlags serve_flags;
  auto* serve = app.add_subcommand(
      "serve",
      "Run the server in the foreground (logs to stderr; rereads --config on "
      "SIGHUP; stops cleanly on SIGTERM or SIGINT, exit 0)");
  auto* listen_option = serve
                            ->add_option("--listen", serve_flags.listen,
                                         "ADDRESS:PORT (port 0: any free port)")
                            ->capture_default_str();
  auto* data_option =
      serve
          ->add_option("--data", serve_flags.data,
                       "SQLite data directory (created if missing); not with "
                       "--store")
          ->capture_default_str();
  serve->add_option(
      "--store", serve_flags.store,
      "keep the data in PostgreSQL instead: a libpq URL, e.g. "
      "postgresql://leasehold@db1,db2/app?target_session_attrs=read-write "
      "(the password from PGPASSWORD or ~/.pgpass, not the command line); "
      "or \"memory\": nothing on disk, for tests (docs/testing.md)");
  serve
      ->add_option("--clock", serve_flags.clock,
                   "\"real\" (default) or \"manual\": time moves only by "
                   "POST /v1/testing/clock; needs --store memory, loopback "
                   "and no tokens (docs/testing.md)")
      ->check(CLI::IsMember({"real", "manual"}));
  serve
      ->add_option("--store-schema", serve_flags.store_schema,
                   "PostgreSQL schema of the --store tables (created if "
                   "missing)")
      ->capture_default_str();
  serve->add_option("--advertise", serve_flags.advertise,
                    "with --store: the URL clients reach this node by, "
                    "shown to the other nodes and sent in redirects to the "
                    "leader (default: http://LISTEN)");
  serve->add_option("--node", serve_flags.node,
                    "with --store: this node's name (default: the host "
                    "name)");
  serve
      ->add_option("--leader-lease-ms", serve_flags.leader_lease_ms,
                   "with --store: the leader's lease; a standby takes over "
                   "within about 1.5 leases after the leader is lost")
      ->check(CLI::Range(std::int64_t{200}, std::int64_t{600'000}))
      ->capture_default_str();
  serve
      ->add_option("--store-timeout-ms", serve_flags.store_timeout_ms,
                   "with --store postgresql://…: how long the database may "
                   "leave a round trip unanswered before its connection is "
                   "given up and the write answers 503")
      ->check(CLI::Range(std::int64_t{100}, std::int64_t{600'000}))
      ->capture_default_str();
  serve->add_option("--config", serve_flags.config, "JSON config file");
  serve->add_option("--tls-cert", serve_flags.tls_cert,
                    "serve HTTPS only, with this PEM certificate (then its "
                    "chain); needs --tls-key");
  serve->add_option("--tls-key", serve_flags.tls_key,
                    "the PEM private key of --tls-cert");
  serve->add_option("--tls-client-ca", serve_flags.tls_client_ca,
                    "verify client certificates by this PEM CA (mutual TLS: "
                    "a token entry's \"subject\" stands for a token)");
  serve->add_flag("--tls-require-client-certificate",
                  serve_flags.tls_require_client_certificate,
                  "refuse a handshake without a client certificate that "
                  "--tls-client-ca verifies");
  serve->add_flag("--allow-plaintext", serve_flags.allow_plaintext,
                  "serve plaintext HTTP beyond loopback (only behind a "
                  "TLS-terminating proxy: tokens travel in cleartext)");
  serve->add_option("--port-file", serve_flags.port_file,
                    "write the bound port to this file once serving");
  serve
      ->add_option("--log-level", serve_flags.log_level,
                   "the least severe log lines written to stderr")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
      ->capture_default_str();
  serve
      ->add_option("--log-format", serve_flags.log_format,
                   "\"text\" (timestamp, level, message, key=value) or "
                   "\"json\" (one {ts, level, msg, fields} object a line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  serve->callback([&] {
    serve_flags.listen_given = listen_option->count() > 0;
    serve_flags.data_given = data_option->count() > 0;
    code = RunServe(serve_flags);
  });
  AddLockCommands(app, code);
  AddRecordCommands(app, code);
  AddSessionCommands(app, code);
  AddWatchCommand(app, code);
  AddBackupCommand(app, code);
  AddBenchCommand(app, code);
  AddRaceCommands(app, demo, code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return code;
}

}  // namespace leasehold::cli
