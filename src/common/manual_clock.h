// ManualClock: a Clock that moves only when told, for `serve --clock manual`
// and the in-process test server (src/testing/test_server.h).
#ifndef LEASEHOLD_COMMON_MANUAL_CLOCK_H_
#define LEASEHOLD_COMMON_MANUAL_CLOCK_H_

#include <mutex>

#include "common/clock.h"
#include "common/status.h"

namespace leasehold {

// Starts at the real time of its construction (so that instants look
// plausible), then stands still until Advance(). Thread-safe.
class ManualClock final : public Clock {
 public:
  ManualClock();
  explicit ManualClock(Time start) : now_(start) {}

  Time Now() const override;
  // Moves the clock forward by `by` and returns the new time. kBadRequest,
  // moving nothing, when `by` is negative or the new time would not fit in
  // a Time (or after the year 9999, which FormatTime cannot write).
  Result<Time> Advance(Duration by);

 private:
  mutable std::mutex mu_;
  Time now_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_COMMON_MANUAL_CLOCK_H_
