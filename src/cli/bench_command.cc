#include "cli/bench_command.h"

#include <CLI/CLI.hpp>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>

#include "http/spawned_server.h"
#include "leasehold/status.h"
#include "loadgen/bench.h"
#include "loadgen/report.h"
#include "loadgen/target_bench.h"

namespace leasehold::cli {
namespace {

using loadgen::BenchOptions;
using loadgen::Scenario;
using std::chrono::milliseconds;

struct BenchFlags {
  std::string url = "http://127.0.0.1:7070";
  std::string target;
  std::string scenario = "applock";
  int connections = 50;
  int threads = 1;
  std::string duration = "10s";
  std::string warmup = "2s";
  std::uint64_t keys = 1'000'000;
  int idle_sessions = 10'000;
  int locks_per_session = 100;
  std::string hot_timeout = "5s";
  std::string token;
  int server_pid = 0;
  bool spawn = false;
  bool json = false;
};

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

// http://HOST:PORT[/...] with a numeric IPv4 or IPv6 host.
Status ParseUrl(const std::string& url, loadgen::ServerAddress& out) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return Status(StatusCode::kBadRequest, "--url must start with http://");
  }
  std::string rest = url.substr(kScheme.size());
  rest = rest.substr(0, rest.find('/'));
  const std::size_t colon = rest.rfind(':');
  std::string host = rest.substr(0, colon);
  std::uint16_t port = 80;
  if (colon != std::string::npos && !rest.ends_with(']')) {
    const std::string p = rest.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (ec != std::errc() || end != p.data() + p.size()) {
      return Status(StatusCode::kBadRequest, "--url has a bad port: " + p);
    }
  } else {
    host = rest;
  }
  if (host.size() > 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  out.host = host;
  out.port = port;
  return Status::Ok();
}

Result<BenchOptions> ToOptions(const BenchFlags& f) {
  BenchOptions o;
  o.target = f.target;
  if (Status st = ParseUrl(f.url, o.server); !st.ok() && o.target.empty()) {
    return std::unexpected(st);
  }
  o.server.token = f.token;
  static const std::map<std::string, Scenario> kScenarios = {
      {"applock", Scenario::kApplock},
      {"checkout", Scenario::kCheckout},
      {"hot", Scenario::kHot},
      {"idle", Scenario::kIdle}};
  o.scenario = kScenarios.at(f.scenario);  // CLI11 checked the name
  o.connections = f.connections;
  o.io_threads = f.threads;
  for (auto [text, out] :
       {std::pair{&f.duration, &o.duration}, std::pair{&f.warmup, &o.warmup},
        std::pair{&f.hot_timeout, &o.hot_timeout}}) {
    auto d = ParseDuration(*text);
    if (!d) return std::unexpected(d.error());
    *out = *d;
  }
  o.keys = f.keys;
  o.idle_sessions = f.idle_sessions;
  o.locks_per_session = f.locks_per_session;
  o.server_pid = f.server_pid;
  return o;
}

// Prints the report as a table or JSON; the exit code.
int Print(const loadgen::BenchReport& report, bool json) {
  if (json) {
    std::cout << boost::json::serialize(loadgen::ToJson(report)) << "\n";
  } else {
    std::cout << loadgen::FormatTable(report);
  }
  return report.ok() ? 0 : 1;
}

int RunBenchCommand(const BenchFlags& flags) {
  auto options = ToOptions(flags);
  if (!options) {
    std::cerr << "leasehold bench: " << options.error().message() << "\n";
    return 2;
  }
  if (!options->target.empty()) {
    return Print(loadgen::RunTargetBench(*options), flags.json);
  }
  std::unique_ptr<http::SpawnedServer> server;
  if (flags.spawn) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    auto spawned = http::SpawnedServer::Start(
        {.binary = ec ? "leasehold" : self.string(),
         .data_dir = "",  // a fresh one, removed at the end
         .config = "",
         .env = {},
         .log_to_file = true});
    if (!spawned) {
      std::cerr << "leasehold bench: " << spawned.error() << "\n";
      return 1;
    }
    server = std::move(*spawned);
    options->server.host = "127.0.0.1";
    options->server.port = server->port();
    options->server_pid = server->pid();
  }
  loadgen::BenchReport report =
      loadgen::RunBench(*options, /*keep_idle=*/server != nullptr);
  report.spawned = server != nullptr;
  return Print(report, flags.json);
}

}  // namespace

void AddBenchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  auto* bench = app.add_subcommand(
      "bench",
      "Load a running server over HTTP (closed loop, keep-alive) and report "
      "pairs/s, requests/s and latency percentiles; exit 1 on any unexpected "
      "answer");
  auto* url = bench->add_option("--url", flags->url, "server to load")
                  ->capture_default_str();
  bench
      ->add_option(
          "--target", flags->target,
          "load this instead, one blocking thread per client, the same way "
          "for every kind (docs/benchmarks.md): http://HOST:PORT (leasehold), "
          "redis://HOST:PORT, postgresql://…[?mode=advisory|update], "
          "sqlite:PATH, etcd://HOST:PORT")
      ->excludes(url);
  bench
      ->add_option("--scenario", flags->scenario,
                   "applock: acquire+release of random names; checkout: "
                   "durable checkout+checkin of random keys; hot: all "
                   "connections on one lock; idle: many held locks, RSS, "
                   "then applock on top")
      ->check(CLI::IsMember({"applock", "checkout", "hot", "idle"}))
      ->capture_default_str();
  bench->add_option("--connections", flags->connections, "connections")
      ->check(CLI::Range(1, 10'000))
      ->capture_default_str();
  bench->add_option("--threads", flags->threads, "I/O threads of the client")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  bench->add_option("--duration", flags->duration, "measured window")
      ->capture_default_str();
  bench->add_option("--warmup", flags->warmup, "unmeasured run before it")
      ->capture_default_str();
  bench->add_option("--keys", flags->keys, "key space of random names")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  bench
      ->add_option("--idle-sessions", flags->idle_sessions,
                   "idle: sessions holding locks")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  bench
      ->add_option("--locks-per-session", flags->locks_per_session,
                   "idle: locks each holds")
      ->check(CLI::Range(1, 10'000'000))
      ->capture_default_str();
  bench
      ->add_option("--hot-timeout", flags->hot_timeout,
                   "hot: how long an acquire may wait")
      ->capture_default_str();
  bench->add_option("--token", flags->token, "bearer token to send");
  bench->add_option("--server-pid", flags->server_pid,
                    "server process for RSS (default: found by port)");
  bench
      ->add_flag("--spawn", flags->spawn,
                 "start a private `leasehold serve` on a free port in a "
                 "temporary directory, load it, report its RSS, stop it "
                 "(--url is ignored)")
      ->excludes("--target");
  bench->add_flag("--json", flags->json, "print one JSON object");
  bench->callback([flags, &exit_code] { exit_code = RunBenchCommand(*flags); });
}

}  // namespace leasehold::cli
