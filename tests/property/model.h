// The model the property test keeps beside the engine: what each session,
// granted entry and parked request must look like, and what one step may
// do. Internal to tests/property (used by runner.h/.cc and runner_checks.cc).
#ifndef LEASEHOLD_TESTS_PROPERTY_MODEL_H_
#define LEASEHOLD_TESTS_PROPERTY_MODEL_H_

#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "tests/property/invariants.h"

namespace leasehold::property::internal {

using std::chrono::milliseconds;

// ns, principal, resource.
using Key = std::tuple<std::string, std::string, std::string>;

struct EntryId {
  SessionId session = 0;
  LockOwner owner = LockOwner::kTransaction;
  Key key;
  auto operator<=>(const EntryId&) const = default;
};

// The model's view of one granted entry.
struct Entry {
  LockMode mode = LockMode::kNoLock;
  std::uint32_t count = 0;
  Fence fence = 0;
  // When the owner first got it: exact for grants at once; for grants after
  // a wait, somewhere between the previous step and this one until the
  // engine first lists it.
  Time since_lo;
  Time since_hi;
};

struct ModelSession {
  SessionId id = 0;
  bool alive = false;
  std::string name;
  milliseconds ttl{0};
  Time opened_at{};
  Time expires_at{};
  int priority = 0;
  bool in_txn = false;
  std::optional<WaitId> wait{};
  std::optional<WaitId> last_wait{};
};

struct PendingWait {
  WaitId id = 0;
  SessionId session = 0;
  Key key{};
  LockOwner owner = LockOwner::kTransaction;
  LockMode requested = LockMode::kNoLock;
  std::optional<Time> deadline{};
  Time since{};
  bool conversion = false;  // the session held the resource when it asked
  std::uint64_t seq = 0;    // parking order
};

// What one step (one engine command, or one AdvanceTo) is allowed to do.
struct Step {
  Time now;   // the instant the engine acts at
  Time sent;  // the instant passed to the command (earlier for a late one)
  // Nothing was due before the command, so the table it acted on is the one
  // listed after the previous step.
  bool pre_state_known = true;
  std::set<SessionId> expired;   // sessions whose expiry is due
  std::set<WaitId> may_cancel;   // waits this step may end with -2
  std::set<WaitId> must_finish;  // waits this step must end
  // The session whose Acquire started to wait (or was the victim), and the
  // wait-for graph with its request queued (when pre_state_known).
  std::optional<SessionId> acquirer;
  std::optional<std::vector<WaitEdge>> hypothetical;
  std::optional<Fence> immediate_fence;
  bool inline_grant_after_victim = false;  // see ContractChoices
  // Results seen in this step, to compare with the events.
  int timeouts = 0;
  int cancels = 0;
  int deadlocks = 0;
};

// Thrown by Fail() to stop a run at the first violation; Runner::Run
// catches it, so it never leaves RunScenario.
struct CheckFailure {
  std::string message;
};

template <typename... Args>
std::string Str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

[[noreturn]] inline void Fail(std::string message) {
  throw CheckFailure{std::move(message)};
}

inline const char* OwnerName(LockOwner owner) {
  return owner == LockOwner::kSession ? "Session" : "Transaction";
}

inline std::string KeyText(const Key& key) {
  return Str(std::get<0>(key), "/", std::get<1>(key), "/'", std::get<2>(key),
             "'");
}

inline bool IsRequestable(LockMode mode) {
  switch (mode) {
    case LockMode::kIntentShared:
    case LockMode::kShared:
    case LockMode::kUpdate:
    case LockMode::kIntentExclusive:
    case LockMode::kExclusive:
      return true;
    default:
      return false;
  }
}

inline std::string CodesText(const std::set<StatusCode>& codes) {
  if (codes.empty()) return "success";
  std::string out;
  for (StatusCode c : codes) {
    if (!out.empty()) out += " or ";
    out += StatusCodeName(c);
  }
  return out;
}

// Points where the engine's behaviour differs from engine.h's text. The
// test follows engine.h; each flag, when true, accepts the engine's choice
// instead. Set one (e.g. kChoices{.release_of_awaited_resource_is_wait_pending
// = true}) only together with the engine.h change that documents it.
struct ContractChoices {
  // Release as Transaction owner outside a transaction: engine.h says
  // kNotHeld; the engine answers kNoTransaction.
  bool release_without_transaction_is_no_transaction = false;
  // Release of a resource the session is waiting to convert: engine.h
  // allows it; the engine refuses with kWaitPending.
  bool release_of_awaited_resource_is_wait_pending = false;
  // Commit/Rollback: engine.h ends only a Transaction-owned wait; the engine
  // also ends a Session-owned wait on a resource the transaction holds.
  bool end_of_transaction_cancels_session_conversion = false;
  // Acquire whose request closes a cycle whose victim is another session,
  // after which it is grantable: engine.h allows only a parked wait (and a
  // FinishedWait) or kGranted/kTimeout/kDeadlock at once; the engine answers
  // kGrantedAfterWait at once, without a wait id.
  bool grant_after_other_victim_is_inline = false;
};
// All four are documented in engine.h (Acquire, Release, Commit/Rollback).
constexpr ContractChoices kChoices{
    .release_without_transaction_is_no_transaction = true,
    .release_of_awaited_resource_is_wait_pending = true,
    .end_of_transaction_cancels_session_conversion = true,
    .grant_after_other_victim_is_inline = true};

// How far behind a late command's instant is (see Op::late).
constexpr milliseconds kLateBy{50};

constexpr WaitId kUnknownWait = 0x7fff'0000'0000'0001ull;

// Keeps what the checks need of each event of the current step.
class RecordingSink final : public EventSink {
 public:
  void OnEvent(const Event& event) override {
    switch (event.type) {
      case EventType::kLockGranted:
        granted_fences.push_back(event.fence);
        break;
      case EventType::kLockTimeout:
        ++timeouts;
        break;
      case EventType::kLockCancelled:
        ++cancels;
        break;
      case EventType::kLockDeadlock:
        ++deadlocks;
        if (event.deadlock == nullptr) deadlock_without_report = true;
        break;
      case EventType::kSessionExpired:
        ++expiries;
        break;
      default:
        break;
    }
  }
  void Clear() { *this = RecordingSink(); }

  std::vector<Fence> granted_fences;
  int timeouts = 0;
  int cancels = 0;
  int deadlocks = 0;
  int expiries = 0;
  bool deadlock_without_report = false;
};

}  // namespace leasehold::property::internal

#endif  // LEASEHOLD_TESTS_PROPERTY_MODEL_H_
