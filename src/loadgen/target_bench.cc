#include "loadgen/target_bench.h"

#include "loadgen/client_phase.h"
#include "loadgen/process_stats.h"
#include "loadgen/target_scenarios.h"

namespace leasehold::loadgen {

namespace {

Workload WorkloadOf(Scenario s) {
  return s == Scenario::kCheckout ? Workload::kCheckout : Workload::kApplock;
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
void RunIdle(const BenchOptions& o, Target& target, BenchReport& report) {
  IdleFigures idle;
  idle.sessions = o.idle_sessions;
  idle.locks_per_session = o.locks_per_session;
  const std::uint64_t count =
      static_cast<std::uint64_t>(o.idle_sessions) * o.locks_per_session;
  if (report.server_pid > 0) idle.rss_before = ResidentBytes(report.server_pid);
  const auto start = SteadyClock::now();
  auto held = target.HoldIdle(count);
  idle.build_seconds =
      std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!held) {
    report = Failed(std::move(report), held.error());
    return;
  }
  if (report.server_pid > 0) idle.rss_after = ResidentBytes(report.server_pid);
  report.idle = idle;
  report.phases.push_back(RunClientPhase(
      o, target, "applock, holding " + std::to_string(count) + " locks",
      o.connections, o.duration, TargetApplockLoop));
  if (Status st = (*held)->Release(); !st.ok()) {
    report.phases.back().errors += 1;
    report.phases.back().error_samples.push_back("idle release: " +
                                                 st.message());
  }
}

}  // namespace

BenchReport RunTargetBench(const BenchOptions& given) {
  BenchOptions options = given;
  BenchReport report;
  report.options = options;
  auto made = MakeTarget(options.target, options.server.token, options.ns);
  if (!made) return Failed(std::move(report), made.error());
  Target& target = **made;
  const Workload workload = WorkloadOf(options.scenario);
  report.target = TargetFacts{std::string(target.Kind()), "", false};
  if (Status st = target.Prepare(workload, options.keys); !st.ok()) {
    return Failed(std::move(report), st);
  }
  report.target->durability = target.Durability(workload);
  report.target->durable = target.Durable(workload);
  report.server_pid = options.server_pid;
  const int n = options.connections;
  switch (options.scenario) {
    case Scenario::kApplock:
      report.phases.push_back(RunClientPhase(
          options, target, "applock", n, options.duration, TargetApplockLoop));
      break;
    case Scenario::kCheckout:
      report.phases.push_back(RunClientPhase(options, target, "checkout", n,
                                             options.duration,
                                             TargetCheckoutLoop));
      break;
    case Scenario::kHot:
      report.phases.push_back(RunClientPhase(options, target, "hot", n,
                                             options.duration, TargetHotLoop));
      break;
    case Scenario::kIdle:
      RunIdle(options, target, report);
      break;
  }
  if (report.server_pid > 0) report.rss_end = ResidentBytes(report.server_pid);
  return report;
}

}  // namespace leasehold::loadgen
