// ActivityHistory: what the dashboard shows about the recent past, fed by
// the engine's events in the server layer (the engine stays I/O-free and
// keeps no history): acquisitions per second for the last minutes, deadlock
// and timeout counts for the last hour, and the latest deadlocks with their
// cycles. So a page opened late still shows what happened before it.
// Thread-safe. Memory is bounded: fixed rings, whatever the event rate.
#ifndef LEASEHOLD_SERVER_ACTIVITY_HISTORY_H_
#define LEASEHOLD_SERVER_ACTIVITY_HISTORY_H_

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "service/owned_event.h"

namespace leasehold::server {

class ActivityHistory {
 public:
  static constexpr std::size_t kRateSeconds = 600;  // per-second history
  static constexpr std::size_t kHourMinutes = 60;   // "the last hour"
  static constexpr std::size_t kMaxDeadlocks = 50;  // kept for GET /deadlocks

  struct Rates {
    std::int64_t first_second = 0;         // Unix second of the first entry
    std::vector<std::uint32_t> applocks;   // applock.granted per second
    std::vector<std::uint32_t> checkouts;  // checkout.granted per second
  };

  // Counts grants, timeouts and deadlocks; keeps deadlock events.
  void OnEvents(const std::vector<OwnedEvent>& events);

  // The last kRateSeconds whole seconds up to and including `now`'s.
  Rates RatesUntil(Time now) const;
  // Deadlocks and timeouts in the 60 minutes up to `now` (minute buckets,
  // so "the last hour" is exact to the minute).
  std::uint64_t DeadlocksInLastHour(Time now) const;
  std::uint64_t TimeoutsInLastHour(Time now) const;
  // applock.deadlock events of the last hour, newest first.
  std::vector<OwnedEvent> RecentDeadlocks(Time now) const;

 private:
  struct Second {
    std::int64_t second = -1;
    std::uint32_t applocks = 0, checkouts = 0;
  };
  struct Minute {
    std::int64_t minute = -1;
    std::uint64_t deadlocks = 0, timeouts = 0;
  };
  Second& SecondOf(Time at);
  Minute& MinuteOf(Time at);
  template <typename F>
  std::uint64_t SumLastHour(Time now, F field) const;

  mutable std::mutex mu_;
  std::array<Second, kRateSeconds> seconds_{};
  std::array<Minute, kHourMinutes> minutes_{};
  std::deque<OwnedEvent> deadlocks_;  // newest at the back
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_ACTIVITY_HISTORY_H_
