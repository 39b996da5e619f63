// The operations a property-test scenario is made of, as plain data, so that
// rapidcheck can generate, shrink and print them.
#ifndef LEASEHOLD_TESTS_PROPERTY_OPS_H_
#define LEASEHOLD_TESTS_PROPERTY_OPS_H_

#include <array>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include "engine/lock_types.h"

namespace leasehold::property {

// Few names, so that sessions contend. "r0 " differs from "r0" only by a
// trailing blank: names compare as bytes.
inline constexpr std::array<std::string_view, 2> kNamespaces = {"app", "ops"};
inline constexpr std::array<std::string_view, 2> kPrincipals = {"public",
                                                                "alice"};
inline constexpr std::array<std::string_view, 4> kResources = {"r0", "r1", "r2",
                                                               "r0 "};

enum class OpKind : std::uint8_t {
  kAcquire,
  kRelease,
  kBegin,
  kCommit,
  kRollback,
  kCancel,      // Engine::Cancel(session)
  kCancelWait,  // Engine::CancelWait(wait id)
  kEndSession,
  kOpenSession,  // reopens the slot if its session is gone
  kKeepAlive,
  kSetPriority,
  kAdvance,
  kTest,
  kMode,
};

// How an Advance moves time.
enum class AdvanceKind : std::uint8_t {
  kJump,  // one AdvanceTo(now + ms)
  kStep,  // AdvanceTo each NextDeadline() on the way, then now + ms
  kLazy,  // tell the engine nothing: the next command applies what is due
};

struct Op {
  OpKind kind = OpKind::kAdvance;
  int slot = 0;  // which session (slot index, < the scenario's sessions)
  int ns = 0;    // indexes into kNamespaces, kPrincipals, kResources
  int principal = 0;
  int resource = 0;
  LockMode mode = LockMode::kExclusive;
  LockOwner owner = LockOwner::kTransaction;
  int timeout_ms = 0;
  // kSetPriority: the priority. kOpenSession: ttl in ms. kAdvance: ms.
  // kCancelWait: 0 = the slot's current wait, 1 = its last finished one,
  // 2 = an id never handed out. kRelease: 0 = the key and owner above;
  // k > 0 = the session's ((k - 1) mod n)-th held entry in the model's order
  // (the key above if it holds nothing), so that most releases hit.
  int value = 0;
  AdvanceKind advance = AdvanceKind::kJump;
  // A command sent with an instant 50 ms before the test's clock, perhaps
  // before one the engine has already seen (as when two threads read the
  // clock and reach the engine in the other order).
  bool late = false;
};

struct Scenario {
  int sessions = 2;
  std::vector<int> ttl_ms;         // per slot
  std::vector<bool> start_in_txn;  // per slot: begin a transaction first
  std::uint64_t fence_floor = 0;
  std::vector<Op> ops;
};

std::ostream& operator<<(std::ostream& os, const Op& op);
std::ostream& operator<<(std::ostream& os, const Scenario& scenario);

}  // namespace leasehold::property

#endif  // LEASEHOLD_TESTS_PROPERTY_OPS_H_
