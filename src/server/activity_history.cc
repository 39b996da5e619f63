#include "server/activity_history.h"

#include <chrono>

namespace leasehold::server {
namespace {

using std::chrono::duration_cast;

std::int64_t UnixSecond(Time t) {
  return duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::int64_t UnixMinute(Time t) {
  return duration_cast<std::chrono::minutes>(t.time_since_epoch()).count();
}

}  // namespace

ActivityHistory::Second& ActivityHistory::SecondOf(Time at) {
  const std::int64_t s = UnixSecond(at);
  Second& slot = seconds_[static_cast<std::size_t>(s) % kRateSeconds];
  if (slot.second != s) slot = Second{s, 0, 0};  // reuse a stale slot
  return slot;
}

ActivityHistory::Minute& ActivityHistory::MinuteOf(Time at) {
  const std::int64_t m = UnixMinute(at);
  Minute& slot = minutes_[static_cast<std::size_t>(m) % kHourMinutes];
  if (slot.minute != m) slot = Minute{m, 0, 0};
  return slot;
}

void ActivityHistory::OnEvents(const std::vector<OwnedEvent>& events) {
  std::lock_guard lock(mu_);
  for (const OwnedEvent& e : events) {
    switch (e.type) {
      case EventType::kLockGranted:
        ++SecondOf(e.at).applocks;
        break;
      case EventType::kCheckoutGranted:
        ++SecondOf(e.at).checkouts;
        break;
      case EventType::kLockTimeout:
      case EventType::kSemaphoreTimeout:
        ++MinuteOf(e.at).timeouts;
        break;
      case EventType::kLockDeadlock:
      case EventType::kSemaphoreDeadlock:
        ++MinuteOf(e.at).deadlocks;
        deadlocks_.push_back(e);
        if (deadlocks_.size() > kMaxDeadlocks) deadlocks_.pop_front();
        break;
      default:
        break;
    }
  }
}

ActivityHistory::Rates ActivityHistory::RatesUntil(Time now) const {
  std::lock_guard lock(mu_);
  Rates r;
  const std::int64_t last = UnixSecond(now);
  r.first_second = last - static_cast<std::int64_t>(kRateSeconds) + 1;
  r.applocks.reserve(kRateSeconds);
  r.checkouts.reserve(kRateSeconds);
  for (std::int64_t s = r.first_second; s <= last; ++s) {
    const Second& slot = seconds_[static_cast<std::size_t>(s) % kRateSeconds];
    const bool current = slot.second == s;
    r.applocks.push_back(current ? slot.applocks : 0);
    r.checkouts.push_back(current ? slot.checkouts : 0);
  }
  return r;
}

template <typename F>
std::uint64_t ActivityHistory::SumLastHour(Time now, F field) const {
  std::lock_guard lock(mu_);
  const std::int64_t last = UnixMinute(now);
  std::uint64_t sum = 0;
  for (const Minute& m : minutes_) {
    if (m.minute > last - static_cast<std::int64_t>(kHourMinutes) &&
        m.minute <= last) {
      sum += field(m);
    }
  }
  return sum;
}

std::uint64_t ActivityHistory::DeadlocksInLastHour(Time now) const {
  return SumLastHour(now, [](const Minute& m) { return m.deadlocks; });
}

std::uint64_t ActivityHistory::TimeoutsInLastHour(Time now) const {
  return SumLastHour(now, [](const Minute& m) { return m.timeouts; });
}

std::vector<OwnedEvent> ActivityHistory::RecentDeadlocks(Time now) const {
  std::lock_guard lock(mu_);
  std::vector<OwnedEvent> out;
  for (auto it = deadlocks_.rbegin(); it != deadlocks_.rend(); ++it) {
    if (now - it->at > std::chrono::hours(1)) break;
    out.push_back(*it);
  }
  return out;
}

}  // namespace leasehold::server
