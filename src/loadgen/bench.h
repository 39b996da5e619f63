// RunBench: runs one scenario against a server and gathers the figures.
//
// applock, checkout, hot: one timed phase (warmup, then the window).
// idle: a timed applock phase on the fresh server ("before"), then the
// build of idle_sessions × locks_per_session held locks (untimed; the RSS
// of the server before and after), then a timed applock phase on top
// ("holding"), then the idle sessions are ended (unless `keep_idle`).
#ifndef LEASEHOLD_LOADGEN_BENCH_H_
#define LEASEHOLD_LOADGEN_BENCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loadgen/bench_options.h"
#include "loadgen/phase.h"

namespace leasehold::loadgen {

struct IdleFigures {
  int sessions = 0;
  int locks_per_session = 0;
  double build_seconds = 0;
  std::optional<std::uint64_t> rss_before;  // bytes, server process
  std::optional<std::uint64_t> rss_after;
};

// What a `--target` run was driven against.
struct TargetFacts {
  std::string kind;        // Target::Kind()
  std::string durability;  // Target::Durability()
  bool durable = false;
};

struct BenchReport {
  BenchOptions options;
  std::optional<TargetFacts> target;  // set by RunTargetBench
  std::vector<PhaseResult> phases;    // in order; see above
  std::optional<IdleFigures> idle;
  int server_pid = 0;  // 0: unknown
  bool spawned = false;
  std::optional<std::uint64_t> rss_end;  // bytes, after the last phase

  std::uint64_t errors() const;
  // No errors, and every phase did something (timed phases: pairs > 0).
  bool ok() const;
};

// `keep_idle`: leave the idle sessions in place (a spawned server is about
// to be stopped anyway).
BenchReport RunBench(const BenchOptions& options, bool keep_idle = false);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_BENCH_H_
