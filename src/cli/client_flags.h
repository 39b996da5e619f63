// What every client subcommand of `leasehold` shares: where the server is,
// the token, the namespace, --json, durations, exit codes, and how errors
// are reported.
#ifndef LEASEHOLD_CLI_CLIENT_FLAGS_H_
#define LEASEHOLD_CLI_CLIENT_FLAGS_H_

#include <CLI/CLI.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "common/clock.h"
#include "leasehold/client.h"

namespace leasehold::cli {

// Exit codes of the client subcommands (also printed by --help).
enum ExitCode : int {
  kExitOk = 0,
  kExitRefused = 1,  // the answer is no: lock not granted, key held by
                     // another, save refused, not held, exists, not found
  kExitUsage = 2,    // bad command line
  kExitFailed = 3,   // the call failed: unreachable, unauthorized, bad input
  kExitLost = 4,     // lock -- COMMAND: the lock was lost while it ran
};

inline constexpr const char* kExitCodesHelp =
    "Exit codes: 0 done; 1 the answer is no (lock not granted, key held by "
    "another, save refused, not held, exists, not found); 2 usage error; 3 "
    "the call "
    "failed (server unreachable, unauthorized, bad input: the message says "
    "which); 4 the lock was lost while `lock NAME -- COMMAND` ran. "
    "`lock NAME -- COMMAND` otherwise exits with COMMAND's status (128+N "
    "if a signal N ended it).";

struct ClientFlags {
  // One URL, or several nodes separated by commas (ClientOptions::url).
  std::string url = "http://127.0.0.1:7070";
  std::string token;
  std::string ns = "default";
  // TLS files (ClientOptions::ca_file, cert_file, key_file).
  std::string ca_file{};
  std::string cert_file{};
  std::string key_file{};
  bool json = false;
};

// Adds --url (env LEASEHOLD_URL), --auth-token (env LEASEHOLD_TOKEN), --ns (env
// LEASEHOLD_NS), --ca-file (env LEASEHOLD_CA_FILE), --cert (env
// LEASEHOLD_CERT), --key (env LEASEHOLD_KEY) and --json to `command`.
void AddClientFlags(CLI::App* command, ClientFlags& flags);

// A client for the flags; on failure prints the error and returns nullopt.
std::optional<client::Client> Connect(const ClientFlags& flags);

// Prints a failed call's error to stderr (as JSON with --json) and returns
// its exit code: kExitRefused for the API's refusals (exists, not_found,
// not_held), else kExitFailed.
int ReportError(const client::Error& error, const ClientFlags& flags);

// Prints `value` as one line of JSON to stdout.
void PrintJson(const boost::json::value& value);

// "250ms", "10s", "5m", "2h", or plain milliseconds; "-1" for "forever"
// where allowed. nullopt when malformed.
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

// A CLI11 validator for ParseDuration.
CLI::Validator DurationValidator();

// The server's clock: `now` of GET /v1/whoami, or this machine's clock when
// the server does not say. Leases are counted down against it, so that this
// machine's clock (stepped, or simply wrong) does not move them.
Time ServerNow(client::Client& c);

// "4:12 left", "1:02:03 left", "expired 0:07 ago", or "" if `at` is not a
// time, relative to `now` (the server's, from ServerNow).
std::string TimeLeft(std::string_view at, Time now);

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_CLIENT_FLAGS_H_
