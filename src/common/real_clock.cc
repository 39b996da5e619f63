#include "common/real_clock.h"

namespace leasehold {

RealClock::RealClock()
    : wall_at_start_(
          std::chrono::floor<Duration>(std::chrono::system_clock::now())),
      steady_at_start_(std::chrono::steady_clock::now()) {}

Time RealClock::Now() const {
  const auto elapsed = std::chrono::steady_clock::now() - steady_at_start_;
  return wall_at_start_ + std::chrono::floor<Duration>(elapsed);
}

}  // namespace leasehold
