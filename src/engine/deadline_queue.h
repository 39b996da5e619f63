// DeadlineQueue: every instant at which the engine acts on its own (a wait
// times out, a transaction runs out of time, a session expires, a lease
// runs out), in the order it acts. Internal to the engine; single-threaded.
//
// One queue, so that advancing time is one loop over its front and the
// next deadline is that front. At equal instants the kinds apply in the
// order declared below, and within a kind by id (the wait, session or
// lease id), which is the order the engine has always applied them in.
#ifndef LEASEHOLD_ENGINE_DEADLINE_QUEUE_H_
#define LEASEHOLD_ENGINE_DEADLINE_QUEUE_H_

#include <compare>
#include <cstdint>
#include <optional>
#include <set>

#include "common/clock.h"

namespace leasehold::engine {

enum class DeadlineKind : std::uint8_t {
  kWaitTimeout,       // id: the WaitId
  kTransactionLimit,  // id: the SessionId whose transaction it limits
  kSessionExpiry,     // id: the SessionId
  kLeaseExpiry,       // id: the lease id RecordTable gave it
  kLockDelayEnd,      // id: the hold LockManager gave it (0: the restart's)
  kHoldLimit,         // id: the grant's hold limit LockManager gave it
};

struct Deadline {
  Time at;
  DeadlineKind kind = DeadlineKind::kWaitTimeout;
  std::uint64_t id = 0;
  auto operator<=>(const Deadline&) const = default;
};

class DeadlineQueue {
 public:
  void Add(const Deadline& d) { queue_.insert(d); }
  // Removing one that is not there does nothing.
  void Remove(const Deadline& d) { queue_.erase(d); }
  // Removes and returns the first deadline if it is due at or before `now`.
  std::optional<Deadline> PopDueBy(Time now) {
    if (queue_.empty() || queue_.begin()->at > now) return std::nullopt;
    return queue_.extract(queue_.begin()).value();
  }
  std::optional<Time> Next() const {
    if (queue_.empty()) return std::nullopt;
    return queue_.begin()->at;
  }

 private:
  std::set<Deadline> queue_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_DEADLINE_QUEUE_H_
