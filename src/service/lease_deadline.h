// LeaseDeadline: the instant past which a node may no longer vouch that it
// leads (its leader lease, src/cluster), on the monotonic clock. Past it,
// an EngineService answers every command kUnavailable, whether or not the
// node has yet learned that another one took over. Thread-safe and cheap
// (one atomic), so every command checks it outside the service's mutex.
#ifndef LEASEHOLD_SERVICE_LEASE_DEADLINE_H_
#define LEASEHOLD_SERVICE_LEASE_DEADLINE_H_

#include <atomic>
#include <chrono>

#include "common/status.h"

namespace leasehold {

class LeaseDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  // time_point::max() (the default): no deadline; time_point::min(): lapsed.
  void Set(Clock::time_point deadline) {
    deadline_.store(deadline.time_since_epoch().count(),
                    std::memory_order_relaxed);
  }
  // OK, or why the deadline has passed.
  Status Lapsed() const {
    if (Clock::now().time_since_epoch().count() <
        deadline_.load(std::memory_order_relaxed)) {
      return Status::Ok();
    }
    return Status(StatusCode::kUnavailable,
                  "this node does not lead now (it stands by, or could not "
                  "renew its lease in time): GET /v1/cluster names the "
                  "leader");
  }

 private:
  std::atomic<Clock::rep> deadline_{
      Clock::time_point::max().time_since_epoch().count()};
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_LEASE_DEADLINE_H_
