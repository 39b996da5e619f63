// RealClock: the only place in leasehold that reads the system clock.
#ifndef LEASEHOLD_COMMON_REAL_CLOCK_H_
#define LEASEHOLD_COMMON_REAL_CLOCK_H_

#include <chrono>

#include "common/clock.h"

namespace leasehold {

// UTC time that never goes backwards: the wall clock read once at
// construction, advanced by the monotonic clock. Durations (TTLs, timeouts)
// are therefore immune to wall-clock steps, while instants stay in UTC.
// Thread-safe.
class RealClock final : public Clock {
 public:
  RealClock();
  Time Now() const override;

 private:
  Time wall_at_start_;
  std::chrono::steady_clock::time_point steady_at_start_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_COMMON_REAL_CLOCK_H_
