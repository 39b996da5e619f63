#include "service/deadline_timer.h"

#include <algorithm>

namespace leasehold {

void DeadlineTimer::Arm(std::optional<Time> next) {
  if (manual_ != nullptr || stopped_ || next == armed_at_) return;
  armed_at_ = next;
  if (!next) {
    timer_.cancel();
    return;
  }
  const auto delay = *next - clock_.Now();
  timer_.expires_after(std::max(delay, Duration::zero()) +
                       std::chrono::microseconds(1));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) fire_();  // else re-armed or cancelled
  });
}

void DeadlineTimer::Stop() {
  stopped_ = true;
  armed_at_.reset();
  timer_.cancel();
}

Result<Time> DeadlineTimer::AdvanceManualClock(Duration by) {
  if (manual_ == nullptr) {
    return Error(StatusCode::kNotFound, "the clock is not manual");
  }
  return manual_->Advance(by);
}

std::optional<Time> DeadlineTimer::ManualNow() const {
  if (manual_ == nullptr) return std::nullopt;
  return manual_->Now();
}

void DeadlineTimer::UseManualClock(ManualClock& clock) {
  manual_ = &clock;
  armed_at_.reset();
  timer_.cancel();
}

}  // namespace leasehold
