#include "peer_bench/peer_bench.h"

#include "loadgen/process_stats.h"
#include "peer_bench/client_phase.h"
#include "peer_bench/scenarios.h"

namespace leasehold::peer_bench {

namespace {

using loadgen::IdleFigures;
using loadgen::ResidentBytes;
using loadgen::Scenario;

peers::Workload WorkloadOf(Scenario s) {
  return s == Scenario::kCheckout ? peers::Workload::kCheckout
                                  : peers::Workload::kApplock;
}

// A report of a run that could not start: one error, no phases.
BenchReport Failed(BenchReport report, const Status& st) {
  PhaseResult p;
  p.name = "set-up";
  p.errors = 1;
  p.error_samples.push_back(st.message());
  report.phases.push_back(std::move(p));
  return report;
}

// Takes the idle locks, runs applock on top, gives them back.
void RunIdle(const BenchOptions& o, peers::Peer& peer, BenchReport& report) {
  IdleFigures idle;
  idle.sessions = o.idle_sessions;
  idle.locks_per_session = o.locks_per_session;
  const std::uint64_t count =
      static_cast<std::uint64_t>(o.idle_sessions) * o.locks_per_session;
  if (report.server_pid > 0) idle.rss_before = ResidentBytes(report.server_pid);
  const auto start = SteadyClock::now();
  auto held = peer.HoldIdle(count);
  idle.build_seconds =
      std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!held) {
    report = Failed(std::move(report), held.error());
    return;
  }
  if (report.server_pid > 0) idle.rss_after = ResidentBytes(report.server_pid);
  report.idle = idle;
  report.phases.push_back(RunClientPhase(
      o, peer, "applock, holding " + std::to_string(count) + " locks",
      o.connections, o.duration, ApplockLoop));
  if (Status st = (*held)->Release(); !st.ok()) {
    report.phases.back().errors += 1;
    report.phases.back().error_samples.push_back("idle release: " +
                                                 st.message());
  }
}

}  // namespace

BenchReport RunPeerBench(const BenchOptions& given) {
  BenchOptions options = given;
  BenchReport report;
  report.options = options;
  auto made = peers::MakePeer(
      options.target, {.token = options.server.token, .ns = options.ns});
  if (!made) return Failed(std::move(report), made.error());
  peers::Peer& peer = **made;
  const peers::Workload workload = WorkloadOf(options.scenario);
  report.target = loadgen::TargetFacts{std::string(peer.Kind()), "", false};
  if (Status st = peer.Prepare(workload, options.keys); !st.ok()) {
    return Failed(std::move(report), st);
  }
  report.target->durability = peer.Durability(workload);
  report.target->durable = peer.Durable(workload);
  report.server_pid = options.server_pid;
  const int n = options.connections;
  switch (options.scenario) {
    case Scenario::kApplock:
      report.phases.push_back(RunClientPhase(options, peer, "applock", n,
                                             options.duration, ApplockLoop));
      break;
    case Scenario::kCheckout:
      report.phases.push_back(RunClientPhase(options, peer, "checkout", n,
                                             options.duration, CheckoutLoop));
      break;
    case Scenario::kHot:
      report.phases.push_back(
          RunClientPhase(options, peer, "hot", n, options.duration, HotLoop));
      break;
    case Scenario::kIdle:
      RunIdle(options, peer, report);
      break;
  }
  if (report.server_pid > 0) report.rss_end = ResidentBytes(report.server_pid);
  return report;
}

}  // namespace leasehold::peer_bench
