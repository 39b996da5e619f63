// Runs a Scenario against a real Engine beside a model of what the engine
// must hold, and checks after every step:
//  (a)-(c) the lock-table invariants of invariants.h;
//  (d) every granted entry's mode, count and fence equal the model's, built
//      from grants and releases as observed, and the engine lists nothing
//      the model lacks; parked requests, sessions, NextDeadline and Stats
//      agree with the model too;
//  (e) fences strictly increase across all grants observed;
// plus: every result and error is one the model allows (errors exactly when
// they apply; a grant at once exactly when the request was grantable; a
// timeout only after the deadline; a cancel only with a cause; a deadlock
// only with a real cycle and the right victim), and every FinishedWait
// answers a wait the test saw parked, exactly once.
#ifndef LEASEHOLD_TESTS_PROPERTY_HARNESS_H_
#define LEASEHOLD_TESTS_PROPERTY_HARNESS_H_

#include <functional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "tests/property/ops.h"

namespace leasehold::property {

// What happened during a run, for rapidcheck's classification output and
// for tests that a scenario reached the situation it was written for.
struct RunStats {
  int steps = 0;
  int grants_at_once = 0;
  int parked = 0;
  int conversions_parked = 0;
  int grants_after_wait = 0;
  int timeouts = 0;       // immediate (timeout 0) and after a wait
  int cancels = 0;        // FinishedWait with -2
  int deadlocks = 0;      // victims, immediate or parked
  int expiries = 0;       // sessions that expired
  int errors = 0;         // commands that failed as the model expected
  int longest_queue = 0;  // most requests waiting on one resource at once
};

struct RunOptions {
  // Applied to every ListLocks answer before it is checked, so that a test
  // can show the checks catch a corrupted table. Normally empty.
  std::function<void(std::vector<LockInfo>&)> tamper;
};

// Runs `scenario` from a fresh Engine (see runner.h). Returns the first
// violation with the step that caused it and the engine's lock table, or
// empty if none.
std::string RunScenario(const Scenario& scenario, RunStats* stats = nullptr,
                        const RunOptions& options = {});

}  // namespace leasehold::property

#endif  // LEASEHOLD_TESTS_PROPERTY_HARNESS_H_
