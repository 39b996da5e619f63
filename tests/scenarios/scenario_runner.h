// Runs a parsed scenario against a fresh leasehold::Engine.
//
// Each step is one Engine call at the step's instant (ScenarioStart() plus
// the step's `at` milliseconds), passed as `now`. Time moves only forward. A
// command at a later instant must itself apply what fell due before it (the
// engine's contract); `at MS` alone, and a `finished` line at a later
// instant, call Engine::AdvanceTo. After every step the runner collects the
// waits that finished (Engine::TakeFinishedWaits); each must be matched by a
// `finished` line before the next other step, so a wait that ends without
// the scenario saying so fails the run.
//
// Uses: the engine's public header and scenario_parser.h.
#ifndef LEASEHOLD_TESTS_SCENARIOS_SCENARIO_RUNNER_H_
#define LEASEHOLD_TESTS_SCENARIOS_SCENARIO_RUNNER_H_

#include <optional>
#include <string>

#include "common/clock.h"
#include "tests/scenarios/scenario_parser.h"

namespace leasehold::scenarios {

struct ScenarioFailure {
  int line = 0;         // the scenario line at fault (1-based)
  std::string message;  // the step, what it expected, what happened instead,
                        // and the lock table at that moment
};

// 2026-01-01T00:00:00Z: the instant of `at 0`.
Time ScenarioStart();

// Runs every step in order. Returns the first step whose outcome differs
// from its expectation (or the step during which an unexpected wait
// finished); nullopt when the whole scenario went as written.
std::optional<ScenarioFailure> RunScenario(const Scenario& scenario);

}  // namespace leasehold::scenarios

#endif  // LEASEHOLD_TESTS_SCENARIOS_SCENARIO_RUNNER_H_
