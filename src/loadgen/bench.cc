#include "loadgen/bench.h"

#include <algorithm>

#include "loadgen/process_stats.h"
#include "loadgen/scenarios.h"

namespace leasehold::loadgen {

namespace asio = boost::asio;

namespace {

bool IsLoopback(const std::string& host) {
  return host.starts_with("127.") || host == "::1" || host == "localhost";
}

PhaseResult Timed(const BenchOptions& o, std::string name, WorkerBody body) {
  return RunPhase(o, std::move(name), o.connections, o.duration, body);
}

void RunIdle(const BenchOptions& o, bool keep_idle, BenchReport& report) {
  report.phases.push_back(Timed(o, "applock, before idle locks", ApplockLoop));
  IdleFigures idle;
  idle.sessions = o.idle_sessions;
  idle.locks_per_session = o.locks_per_session;
  if (report.server_pid > 0) idle.rss_before = ResidentBytes(report.server_pid);
  const int builders = std::max(1, std::min(o.connections, o.idle_sessions));
  std::vector<std::vector<std::string>> ids(builders);
  report.phases.push_back(RunPhase(
      o, "idle build", builders, std::nullopt, [&ids, builders](Worker& w) {
        return IdleBuild(w, builders, ids[w.index()]);
      }));
  idle.build_seconds = report.phases.back().seconds;
  if (report.server_pid > 0) idle.rss_after = ResidentBytes(report.server_pid);
  report.idle = idle;
  report.phases.push_back(
      Timed(o,
            "applock, holding " +
                std::to_string(static_cast<std::uint64_t>(o.idle_sessions) *
                               o.locks_per_session) +
                " locks",
            ApplockLoop));
  if (keep_idle) return;
  report.phases.push_back(
      RunPhase(o, "idle tear-down", builders, std::nullopt,
               [&ids](Worker& w) { return EndSessions(w, ids[w.index()]); }));
}

}  // namespace

std::uint64_t BenchReport::errors() const {
  std::uint64_t n = 0;
  for (const PhaseResult& p : phases) n += p.errors;
  return n;
}

bool BenchReport::ok() const {
  if (errors() != 0 || phases.empty()) return false;
  for (const PhaseResult& p : phases) {
    if (p.requests.count() == 0) return false;
    if (p.timed && p.pairs.count() == 0) return false;
  }
  return true;
}

BenchReport RunBench(const BenchOptions& given, bool keep_idle) {
  BenchOptions options = given;
  if (options.server_pid == 0 && IsLoopback(options.server.host)) {
    options.server_pid = FindListeningProcess(options.server.port);
  }
  BenchReport report;
  report.options = options;
  report.server_pid = options.server_pid;
  switch (options.scenario) {
    case Scenario::kApplock:
      report.phases.push_back(Timed(options, "applock", ApplockLoop));
      break;
    case Scenario::kCheckout:
      report.phases.push_back(Timed(options, "checkout", CheckoutLoop));
      break;
    case Scenario::kHot:
      report.phases.push_back(Timed(options, "hot", HotLoop));
      break;
    case Scenario::kIdle:
      RunIdle(options, keep_idle, report);
      break;
  }
  if (report.server_pid > 0) report.rss_end = ResidentBytes(report.server_pid);
  return report;
}

}  // namespace leasehold::loadgen
