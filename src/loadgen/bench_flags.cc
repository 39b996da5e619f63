#include "loadgen/bench_flags.h"

#include <boost/json/serialize.hpp>
#include <charconv>
#include <iostream>
#include <map>

#include "loadgen/report.h"

namespace leasehold::loadgen {

namespace {

using std::chrono::milliseconds;

// "10s", "500ms", "2m", "1.5s" or a bare number of seconds.
Result<milliseconds> ParseDuration(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, value);
  const std::string unit(rest, end);
  static const std::map<std::string, double> kMs = {
      {"", 1000}, {"s", 1000}, {"ms", 1}, {"m", 60'000}};
  const auto it = kMs.find(unit);
  if (ec != std::errc() || it == kMs.end() || value < 0) {
    return Error(StatusCode::kBadRequest,
                 "\"" + text + "\" is not a duration like 10s, 500ms or 2m");
  }
  return milliseconds(static_cast<std::int64_t>(value * it->second));
}

}  // namespace

void AddBenchFlags(CLI::App* bench, BenchFlags& flags) {
  bench
      ->add_option("--scenario", flags.scenario,
                   "applock: acquire+release of random names; checkout: "
                   "durable checkout+checkin of random keys; hot: all "
                   "connections on one lock; idle: many held locks, RSS, "
                   "then applock on top")
      ->check(CLI::IsMember({"applock", "checkout", "hot", "idle"}))
      ->capture_default_str();
  bench->add_option("--connections", flags.connections, "connections")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  bench->add_option("--duration", flags.duration, "measured window")
      ->capture_default_str();
  bench->add_option("--warmup", flags.warmup, "unmeasured run before it")
      ->capture_default_str();
  bench->add_option("--keys", flags.keys, "key space of random names")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  bench
      ->add_option("--idle-sessions", flags.idle_sessions,
                   "idle: sessions holding locks")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  bench
      ->add_option("--locks-per-session", flags.locks_per_session,
                   "idle: locks each holds")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  bench
      ->add_option("--hot-timeout", flags.hot_timeout,
                   "hot: how long an acquire may wait")
      ->capture_default_str();
  bench
      ->add_option("--ns", flags.ns,
                   "the leasehold namespace the locks and records go in")
      ->capture_default_str();
  bench->add_option("--token", flags.token, "bearer token to send");
  bench->add_option("--server-pid", flags.server_pid,
                    "server process for RSS (default: found by port)");
  bench->add_flag("--json", flags.json, "print one JSON object");
}

Result<BenchOptions> ToOptions(const BenchFlags& f) {
  BenchOptions o;
  o.server.token = f.token;
  static const std::map<std::string, Scenario> kScenarios = {
      {"applock", Scenario::kApplock},
      {"checkout", Scenario::kCheckout},
      {"hot", Scenario::kHot},
      {"idle", Scenario::kIdle}};
  o.scenario = kScenarios.at(f.scenario);  // CLI11 checked the name
  o.connections = f.connections;
  for (auto [text, out] :
       {std::pair{&f.duration, &o.duration}, std::pair{&f.warmup, &o.warmup},
        std::pair{&f.hot_timeout, &o.hot_timeout}}) {
    auto d = ParseDuration(*text);
    if (!d) return std::unexpected(d.error());
    *out = *d;
  }
  o.keys = f.keys;
  o.ns = f.ns;
  o.idle_sessions = f.idle_sessions;
  o.locks_per_session = f.locks_per_session;
  o.server_pid = f.server_pid;
  return o;
}

int PrintReport(const BenchReport& report, bool json) {
  if (json) {
    std::cout << boost::json::serialize(ToJson(report)) << "\n";
  } else {
    std::cout << FormatTable(report);
  }
  return report.ok() ? 0 : 1;
}

}  // namespace leasehold::loadgen
