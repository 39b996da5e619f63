// RunPeerBench: `leasehold-peers bench --target URL`, one scenario against
// any peer (src/peers) through the one-thread-per-client driver.
//
// applock, checkout, hot: one timed phase. idle: idle_sessions ×
// locks_per_session idle locks are taken (untimed; the peer's RSS before
// and after when its process is known), then a timed applock phase runs on
// top, then the idle locks are given back.
#ifndef LEASEHOLD_PEER_BENCH_PEER_BENCH_H_
#define LEASEHOLD_PEER_BENCH_PEER_BENCH_H_

#include "loadgen/bench.h"

namespace leasehold::peer_bench {

using loadgen::BenchOptions;
using loadgen::BenchReport;

// `options.target` is the peer's URL. A peer that cannot be reached or
// prepared gives a report with one error and no phases (ok() is false).
BenchReport RunPeerBench(const BenchOptions& options);

}  // namespace leasehold::peer_bench

#endif  // LEASEHOLD_PEER_BENCH_PEER_BENCH_H_
