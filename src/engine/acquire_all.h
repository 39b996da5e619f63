// AcquireAllCalls: acquire-all calls (Engine::AcquireAll; docs/
// lock-manager.md, "Ordered multi-lock") on their way. A call takes its
// locks one by one in canonical order, all or nothing, within one timeout;
// while one of them waits, the call is kept here under its wait id, and
// LockManager hands the decision on that lock back as a CallStep instead of
// a finished wait. Settle carries the call on from there: the next locks,
// or its end, handed to LockManager as the call's FinishedWait. Internal to
// the engine; single-threaded.
#ifndef LEASEHOLD_ENGINE_ACQUIRE_ALL_H_
#define LEASEHOLD_ENGINE_ACQUIRE_ALL_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/engine_types.h"
#include "engine/lock_manager.h"
#include "engine/lock_types.h"
#include "engine/session.h"
#include "engine/session_table.h"

namespace leasehold::engine {

// An acquire-all call, its request checked (Engine::AcquireAll).
struct AcquireAllCall {
  SessionId session = 0;
  std::string ns;
  std::string principal;
  LockOwner owner = LockOwner::kTransaction;
  std::vector<std::pair<std::string, LockMode>> locks;  // canonical order
  bool may_wait = true;
  std::optional<Time> deadline;  // of the whole call
  Duration max_hold{0};          // each lock's hold limit (0: none)
  bool waited = false;
  AcquireAllResult result;  // result.locks: those granted so far
};

class AcquireAllCalls {
 public:
  // The call's session, if it may ask for the call's next lock now (the
  // engine's rules: the session exists, a Transaction-owned lock needs its
  // transaction, within its namespace's limit); else why not. May roll
  // back a transaction past its limit.
  using MayRequest = std::function<Result<Session*>(
      SessionId session, std::string_view ns, LockOwner owner, Time now)>;

  // Not owned; both must outlive this.
  AcquireAllCalls(const SessionTable* sessions, LockManager* locks,
                  MayRequest may_request)
      : sessions_(sessions),
        locks_(locks),
        may_request_(std::move(may_request)) {}
  AcquireAllCalls(const AcquireAllCalls&) = delete;
  AcquireAllCalls& operator=(const AcquireAllCalls&) = delete;

  // Takes the call's locks until one waits (the outcome's `wait`: the
  // call's id, its end comes through Settle) or the call ends (its
  // result). An error when a lock's request failed: the call then holds
  // nothing new.
  Result<AcquireAllOutcome> Start(Time now, AcquireAllCall call);
  // Carries on, at `now`, the calls whose waiting lock was decided.
  void Settle(Time now);

 private:
  bool Continue(AcquireAllCall& call, Time now, WaitId& id);
  bool Took(AcquireAllCall& call, AcquireOutcome& done, Time now);
  void Undo(AcquireAllCall& call, Time now);

  const SessionTable* sessions_;
  LockManager* locks_;
  MayRequest may_request_;
  // Calls with a waiting lock, by the call's wait id.
  std::unordered_map<WaitId, AcquireAllCall> calls_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_ACQUIRE_ALL_H_
