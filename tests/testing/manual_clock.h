// ManualClock: a Clock that moves only when a test says so.
#ifndef LEASEHOLD_TESTS_TESTING_MANUAL_CLOCK_H_
#define LEASEHOLD_TESTS_TESTING_MANUAL_CLOCK_H_

#include <atomic>
#include <chrono>

#include "leasehold/clock.h"

namespace leasehold::testing {

class ManualClock final : public Clock {
 public:
  // Starts at 2026-01-01T00:00:00Z so that formatted times are readable.
  ManualClock()
      : now_(std::chrono::sys_days{std::chrono::year{2026} /
                                   std::chrono::January / 1}) {}
  Time Now() const override { return now_.load(); }
  void Advance(Duration d) { now_.store(now_.load() + d); }
  void AdvanceMs(long long ms) { Advance(std::chrono::milliseconds(ms)); }

 private:
  std::atomic<Time> now_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_MANUAL_CLOCK_H_
