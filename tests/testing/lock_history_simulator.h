// A simulated lock server and its clients, for the history checks' random
// tests. The server follows the engine (its mode table, counted
// re-acquisition and conversion, one fence counter that jumps at each
// simulated fail-over, sessions that expire without keep-alives, records as
// registers); the clients make one call at a time with random latencies,
// some answers are lost (kUnknown) whether or not the call took effect, a
// fail-over loses every call in flight, and some unknown writes land late.
// Its histories are legal by construction, unless asked for a bug.
#ifndef LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_SIMULATOR_H_
#define LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_SIMULATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/testing/lock_history.h"

namespace leasehold::testing {

struct SimulationOptions {
  std::uint64_t seed = 1;
  std::size_t operations = 12'000;
  int clients = 8;
  int resources = 3;
  int keys = 4;
  // Once, at a random moment, the server grants a lock although another
  // session holds it in a conflicting mode, and that holder's client can
  // prove it held the lock then.
  bool conflicting_grant = false;
};

struct Simulation {
  History history;
  std::string bug;  // what the server did wrong; empty when nothing
};

Simulation Simulate(const SimulationOptions& options);

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_LOCK_HISTORY_SIMULATOR_H_
