// The engine's record of one session. Internal to the engine.
#ifndef LEASEHOLD_ENGINE_SESSION_H_
#define LEASEHOLD_ENGINE_SESSION_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "engine/staged_writes.h"
#include "leasehold/engine.h"

namespace leasehold::engine {

struct Grant;
struct Waiter;

struct Session {
  SessionId id = 0;
  std::string name;
  std::chrono::milliseconds ttl{0};
  Time opened_at;
  Time expires_at;
  int deadlock_priority = 0;
  std::string caller;
  std::optional<TransactionInfo> transaction;
  // What the open transaction staged; empty without one.
  StagedWrites staged;
  // The namespace whose max_transaction set transaction->deadline, and that
  // limit (for the event and the refusals that follow an expiry).
  std::string deadline_ns;
  std::chrono::milliseconds deadline_limit{0};
  // The last transaction rolled back for staying open too long; cleared when
  // the next one begins. Calls that need a transaction name it until then.
  struct ExpiredTransaction {
    TransactionId id = 0;
    Time at;
    std::string ns;
    std::chrono::milliseconds limit{0};
  };
  std::optional<ExpiredTransaction> expired_transaction;

  // Granted locks, one intrusive list per owner (index: LockOwner).
  std::array<Grant*, 2> grants{nullptr, nullptr};
  std::array<std::size_t, 2> grant_count{0, 0};
  // The session's one parked request, if any.
  Waiter* waiting = nullptr;
  // Deadlock search bookkeeping: the search epoch that last visited us.
  std::uint64_t visited_epoch = 0;

  std::size_t total_grants() const { return grant_count[0] + grant_count[1]; }
};

inline std::size_t OwnerIndex(LockOwner owner) {
  return static_cast<std::size_t>(owner);
}

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_SESSION_H_
