#include "common/manual_clock.h"

#include "common/real_clock.h"

namespace leasehold {
namespace {

// The last instant FormatTime can write: 9999-12-31T23:59:59.999Z.
constexpr Time kLatest =
    std::chrono::sys_days{std::chrono::year{9999} / 12 / 31} +
    std::chrono::hours(24) - std::chrono::milliseconds(1);

}  // namespace

ManualClock::ManualClock() : now_(RealClock().Now()) {}

Time ManualClock::Now() const {
  std::lock_guard lock(mu_);
  return now_;
}

Result<Time> ManualClock::Advance(Duration by) {
  if (by < Duration::zero()) {
    return Error(StatusCode::kBadRequest, "the clock only moves forward");
  }
  std::lock_guard lock(mu_);
  if (by > kLatest - now_) {
    return Error(StatusCode::kBadRequest,
                 "moving the clock that far would take it past the year 9999");
  }
  now_ += by;
  return now_;
}

}  // namespace leasehold
