// DeadlockDetector: finds a wait-for cycle through a session that has just
// started to wait. Internal to the engine; single-threaded.
//
// The wait-for graph has an edge W -> H when W's parked request conflicts
// with a mode H holds on that resource, or (for a request that is not a
// conversion) with the target of H's request waiting ahead of it. Because
// every new edge starts or ends at the session that just started to wait,
// a search from that session finds every new cycle, and a graph with no
// cycle before the request has none afterwards unless through it. The
// search is a depth-first walk of the sessions reachable from the start:
// its cost is proportional to the wait chains it walks, not to the number
// of sessions. See docs/lock-manager.md.
//
// A semaphore breaks the walk's premise: its waiter may be let through by
// any one holder (or several together), not only by all of them, so a
// cycle through a semaphore need not be a deadlock. When the cycle found
// passes through one, it is confirmed by the classic graph reduction over
// the sessions reachable from the start: sessions that wait for nothing
// finish and give back what they hold; a waiter that could then be granted
// finishes too; the start is deadlocked when it cannot finish, and the
// cycle reported is one among the sessions that cannot.
#ifndef LEASEHOLD_ENGINE_DEADLOCK_DETECTOR_H_
#define LEASEHOLD_ENGINE_DEADLOCK_DETECTOR_H_

#include <array>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/lock_table.h"

namespace leasehold::engine {

struct CycleEdge {
  Session* waiter = nullptr;
  Session* holder = nullptr;
  Resource* resource = nullptr;
  LockMode wanted = LockMode::kNoLock;
  std::uint32_t permits = 0;  // a semaphore's: wanted
};

class DeadlockDetector {
 public:
  // The cycle through `start` (which must be waiting), in order, the last
  // edge leading back to `start`; nullopt when there is none.
  std::optional<std::vector<CycleEdge>> FindCycle(Session* start);

  // The sessions `w` waits for, appended to `out` (may repeat). A
  // semaphore's waiter waits for every other holder and every waiter ahead.
  static void AppendBlockers(const Waiter* w, std::vector<Session*>& out);

  // Sessions visited by the last FindCycle (for tests and benchmarks).
  std::size_t last_visited() const { return last_visited_; }

 private:
  // The reduction (see the header comment) from `start`: the cycle through
  // it among the sessions that cannot finish, or nullopt.
  std::optional<std::vector<CycleEdge>> Reduce(Session* start);
  // Whether `w` could be granted once every session not in `stuck` has
  // given back what it holds.
  static bool CouldFinish(const Waiter* w,
                          const std::unordered_set<const Session*>& stuck);

  struct Frame {
    Session* session;
    std::size_t next;  // index into blockers_ of the next edge to follow
    std::size_t end;
  };

  std::uint64_t epoch_ = 0;
  std::size_t last_visited_ = 0;
  std::vector<Frame> stack_;
  std::vector<Session*> blockers_;
  // Per search: for each resource and target mode, the newest
  // non-conversion waiter whose blockers were already listed.
  std::unordered_map<const Resource*, std::array<WaitId, kLockModeCount>>
      scanned_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_DEADLOCK_DETECTOR_H_
