// The command line both benchmark commands share: `leasehold bench` (the
// coroutine driver against a leasehold server) and `leasehold-peers bench`
// (the blocking driver against any peer). Each adds its own way of saying
// where to go (--url, --spawn; --target) and these.
#ifndef LEASEHOLD_LOADGEN_BENCH_FLAGS_H_
#define LEASEHOLD_LOADGEN_BENCH_FLAGS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "loadgen/bench.h"

namespace leasehold::loadgen {

struct BenchFlags {
  std::string scenario = "applock";
  int connections = 50;
  std::string duration = "10s";
  std::string warmup = "2s";
  std::uint64_t keys = 1'000'000;
  int idle_sessions = 10'000;
  int locks_per_session = 100;
  std::string hot_timeout = "5s";
  std::string ns = "bench";
  std::string token;
  int server_pid = 0;
  bool json = false;
};

// Adds --scenario, --connections, --duration, --warmup, --keys,
// --idle-sessions, --locks-per-session, --hot-timeout, --token,
// --server-pid and --json to `command`.
void AddBenchFlags(CLI::App* command, BenchFlags& flags);

// The options the flags ask for; where to go (server, target) and the I/O
// threads are the caller's. kBadRequest for a malformed duration.
Result<BenchOptions> ToOptions(const BenchFlags& flags);

// Prints `report` to stdout as a table, or as one JSON object; returns the
// exit code: 0 when the report is ok(), else 1.
int PrintReport(const BenchReport& report, bool json);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_BENCH_FLAGS_H_
