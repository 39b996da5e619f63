// RunTargetBench: `leasehold bench --target URL`, one scenario against any
// target (targets/target.h) through the one-thread-per-client driver.
//
// applock, checkout, hot: one timed phase. idle: idle_sessions ×
// locks_per_session idle locks are taken (untimed; the target's RSS before
// and after when its process is known), then a timed applock phase runs on
// top, then the idle locks are given back.
#ifndef LEASEHOLD_LOADGEN_TARGET_BENCH_H_
#define LEASEHOLD_LOADGEN_TARGET_BENCH_H_

#include "loadgen/bench.h"

namespace leasehold::loadgen {

// `options.target` names the target. A target that cannot be reached or
// prepared gives a report with one error and no phases (ok() is false).
BenchReport RunTargetBench(const BenchOptions& options);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_TARGET_BENCH_H_
