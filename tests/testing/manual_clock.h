// ManualClock for tests: the server's own manual clock
// (common/manual_clock.h, behind `serve --clock manual`), starting at
// 2026-01-01T00:00:00Z so that formatted times are readable, with a
// shorthand in milliseconds.
#ifndef LEASEHOLD_TESTS_TESTING_MANUAL_CLOCK_H_
#define LEASEHOLD_TESTS_TESTING_MANUAL_CLOCK_H_

#include <chrono>
#include <cstdlib>

#include "common/manual_clock.h"

namespace leasehold::testing {

class ManualClock final : public Clock {
 public:
  Time Now() const override { return clock_.Now(); }
  // A move the clock refuses (backwards, past the year 9999) is a broken
  // test: it stops here rather than run on at the wrong time.
  void Advance(Duration d) {
    if (!clock_.Advance(d)) std::abort();
  }
  void AdvanceMs(long long ms) { Advance(std::chrono::milliseconds(ms)); }

 private:
  leasehold::ManualClock clock_{std::chrono::sys_days{
      std::chrono::year{2026} / std::chrono::January / 1}};
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_MANUAL_CLOCK_H_
