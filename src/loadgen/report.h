// The output of `leasehold bench`: a table for people, JSON for scripts.
#ifndef LEASEHOLD_LOADGEN_REPORT_H_
#define LEASEHOLD_LOADGEN_REPORT_H_

#include <boost/json/object.hpp>
#include <string>

#include "loadgen/bench.h"

namespace leasehold::loadgen {

// Grants per connection in a phase, against the fair share (total / N).
struct Fairness {
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  double fair_share = 0;
  double jain = 0;  // Jain's index: 1 = perfectly even, 1/N = one took all
};
Fairness FairnessOf(const PhaseResult& phase);

// Several lines ending in '\n': the run's conditions, one row per phase,
// then the scenario's own figures (fairness, memory) and error samples.
std::string FormatTable(const BenchReport& report);

// One JSON object; see bench/README.md for its fields.
boost::json::object ToJson(const BenchReport& report);

const char* ScenarioName(Scenario s);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_REPORT_H_
