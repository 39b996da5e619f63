// `leasehold-peers race` and `leasehold-peers demo expiry|checkin`: flags
// only; the race, the walkthroughs and their tables live in src/race/, the
// systems they run on in src/peers/.
#include <fmt/format.h>

#include <boost/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/client_flags.h"
#include "common/real_clock.h"
#include "peers_cli/commands.h"
#include "race/report.h"

namespace leasehold::peers_cli {
namespace {

using cli::DurationValidator;
using cli::kExitFailed;
using cli::kExitOk;
using cli::kExitRefused;
using cli::kExitUsage;
using cli::ParseDuration;
using cli::PrintJson;
using std::chrono::microseconds;
using std::chrono::milliseconds;

struct TargetFlags {
  std::string target;
  std::string token;
  bool json = false;
};

struct RaceFlags {
  TargetFlags target;
  int sessions = 2;
  int rows = 2'000;
  std::string variant = "atomic";
  std::string ttl = "300s";
  long long gap_us = 0;
};

// Prints a failure to stderr (as JSON with --json); kExitUsage for what the
// command line got wrong (target string, variant), else kExitFailed.
int Report(const Status& st, bool json) {
  if (json) {
    std::cerr << boost::json::serialize(boost::json::object{
                     {"error",
                      boost::json::object{{"code", StatusCodeName(st.code())},
                                          {"message", st.message()}}}})
              << "\n";
  } else {
    std::cerr << "leasehold-peers: " << st.message() << "\n";
  }
  return st.code() == StatusCode::kBadRequest ? kExitUsage : kExitFailed;
}

void AddTargetFlags(CLI::App* command, TargetFlags& flags, bool required) {
  if (const char* v = std::getenv("LEASEHOLD_TOKEN"); v != nullptr) {
    flags.token = v;
  }
  auto* target = command->add_option(
      "--target", flags.target,
      "sqlite:PATH, a postgresql://USER@HOST:PORT/DB URL, or the "
      "http://HOST:PORT of a leasehold server");
  if (required) target->required();
  command->add_option("--auth-token", flags.token,
                      "bearer token for a leasehold target (env "
                      "LEASEHOLD_TOKEN)");
  command->add_flag("--json", flags.json, "print one JSON object");
}

int RunRaceCommand(const RaceFlags& flags) {
  auto peer =
      peers::MakePeer(flags.target.target, {.token = flags.target.token});
  if (!peer) return Report(peer.error(), flags.target.json);
  race::RaceOptions options{.sessions = flags.sessions,
                            .rows = flags.rows,
                            .variant = flags.variant == "naive"
                                           ? race::Variant::kNaive
                                           : race::Variant::kAtomic,
                            .ttl = *ParseDuration(flags.ttl),
                            .gap = microseconds(flags.gap_us)};
  RealClock clock;
  auto result = race::RunRace(**peer, options, clock);
  if (!result) return Report(result.error(), flags.target.json);
  if (flags.target.json) {
    PrintJson(race::RaceJson(*result));
  } else {
    race::PrintRace(*result, std::cout);
  }
  return kExitOk;
}

// Without --target, a walkthrough runs on a SQLite file in a fresh
// temporary directory, removed afterwards.
int RunWalkthroughCommand(const TargetFlags& flags, const std::string& which,
                          milliseconds ttl) {
  std::string spec = flags.target;
  std::filesystem::path scratch;
  if (spec.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "leasehold-demo-XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return Report(
          Status(StatusCode::kUnavailable, "cannot make a temporary directory"),
          flags.json);
    }
    scratch = pattern;
    spec = "sqlite:" + (scratch / "demo.db").string();
  }
  auto peer = peers::MakePeer(spec, {.token = flags.token});
  int code = kExitOk;
  if (!peer) {
    code = Report(peer.error(), flags.json);
  } else {
    auto w = which == "expiry" ? race::RunExpiryWalkthrough(**peer, ttl)
                               : race::RunCheckinWalkthrough(**peer);
    if (!w) {
      code = Report(w.error(), flags.json);
    } else {
      if (flags.json) {
        PrintJson(race::WalkthroughJson(*w));
      } else {
        race::PrintWalkthrough(*w, std::cout);
      }
      code = w->ok() ? kExitOk : kExitRefused;
    }
  }
  if (!scratch.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
  }
  return code;
}

}  // namespace

void AddRaceCommands(CLI::App& app, CLI::App* demo, int& code) {
  // Flags live as long as the callbacks that read them (owned by `app`).
  auto race_flags = std::make_shared<RaceFlags>();
  auto* race = app.add_subcommand(
      "race",
      "Rerun seed 000's checkout race: N sessions start together and each "
      "asks for every document; prints documents by number of winners, "
      "documents won per session and a verdict (exit 0 when the race ran)");
  AddTargetFlags(race, race_flags->target, true);
  race->add_option("--sessions", race_flags->sessions, "sessions racing")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  race->add_option("--rows", race_flags->rows, "documents")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  race->add_option("--variant", race_flags->variant,
                   "naive: SELECT, decide, then UPDATE; atomic: one UPDATE "
                   "whose WHERE holds the whole condition")
      ->check(CLI::IsMember({"naive", "atomic"}))
      ->capture_default_str();
  race->add_option("--ttl", race_flags->ttl, "lease asked for on each checkout")
      ->check(DurationValidator())
      ->capture_default_str();
  race->add_option("--gap-us", race_flags->gap_us,
                   "naive only: microseconds to sleep between the read and "
                   "the write (widens the race window)")
      ->check(CLI::Range(0LL, 10'000'000LL))
      ->capture_default_str();
  race->callback([&code, race_flags] { code = RunRaceCommand(*race_flags); });

  auto expiry_flags = std::make_shared<TargetFlags>();
  auto expiry_ttl = std::make_shared<std::string>("2s");
  auto* expiry = demo->add_subcommand(
      "expiry",
      "Seed 000's expiry walkthrough as a step table: a short lease runs out, "
      "a late save is refused (exit 0 when every step answers as expected, "
      "1 when not)");
  AddTargetFlags(expiry, *expiry_flags, false);
  expiry
      ->add_option("--ttl", *expiry_ttl,
                   "the short lease; the walkthrough "
                   "waits 1.5 times as long")
      ->check(DurationValidator())
      ->capture_default_str();
  expiry->callback([&code, expiry_flags, expiry_ttl] {
    code = RunWalkthroughCommand(*expiry_flags, "expiry",
                                 *ParseDuration(*expiry_ttl));
  });

  auto checkin_flags = std::make_shared<TargetFlags>();
  auto* checkin = demo->add_subcommand(
      "checkin",
      "Seed 000's check-in walkthrough as a step table: only the holder can "
      "check in (exit 0 when every step answers as expected, 1 when not)");
  AddTargetFlags(checkin, *checkin_flags, false);
  checkin->callback([&code, checkin_flags] {
    code = RunWalkthroughCommand(*checkin_flags, "checkin", milliseconds(0));
  });
}

}  // namespace leasehold::peers_cli
