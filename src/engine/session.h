// The engine's record of one session. Internal to the engine.
#ifndef LEASEHOLD_ENGINE_SESSION_H_
#define LEASEHOLD_ENGINE_SESSION_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine_types.h"

namespace leasehold::engine {

struct Grant;
struct Transaction;
struct Waiter;

struct Session {
  SessionId id = 0;
  std::string name;
  std::chrono::milliseconds ttl{0};
  Time opened_at;
  Time expires_at;
  int deadlock_priority = 0;
  std::string caller;
  // The open transaction, if any (owned by TransactionManager).
  Transaction* transaction = nullptr;
  // It asked for a lock in a namespace that keeps its locks in memory
  // (journaled in its row, so that a restart knows whom to tell).
  bool memory_locks = false;
  // Restored with memory_locks: those locks are gone and it has not been
  // told yet (LockManager's quiet period).
  bool memory_locks_lost = false;

  // Granted locks, one intrusive list per owner (index: LockOwner).
  std::array<Grant*, 2> grants{nullptr, nullptr};
  std::array<std::size_t, 2> grant_count{0, 0};
  // The session's one parked request, if any.
  Waiter* waiting = nullptr;
  // What it lost while it lived on (LockManager, hold_limits.cc), until
  // its next keep-alive tells it; `journaled`: a lock row records the news.
  struct Loss {
    LostHold hold;
    bool journaled = false;
  };
  std::vector<Loss> lost;
  // Deadlock search bookkeeping: the search epoch that last visited us.
  std::uint64_t visited_epoch = 0;

  std::size_t total_grants() const { return grant_count[0] + grant_count[1]; }
};

inline std::size_t OwnerIndex(LockOwner owner) {
  return static_cast<std::size_t>(owner);
}

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_SESSION_H_
