// Invariants of the application-lock table, checked on what
// Engine::ListLocks reports. Pure functions over LockInfo lists, so that
// they can be tested on hand-made tables (invariants_test.cc) as well as
// used after every step of the property test (lock_properties_test.cc).
//
// Definitions (DESIGN.md "Application-lock semantics"):
//  - Two modes held by different sessions must be compatible.
//  - A waiting request is grantable iff its target is compatible with every
//    other session's granted mode on the resource and, unless it is a
//    conversion, with the target of every request queued ahead of it.
//  - Wait-for edges: a waiter points at every other session holding a
//    conflicting mode and, for non-conversions, at the session of every
//    conflicting request ahead of it. A waiter with no edge is grantable.
#ifndef LEASEHOLD_TESTS_PROPERTY_INVARIANTS_H_
#define LEASEHOLD_TESTS_PROPERTY_INVARIANTS_H_

#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/lock_types.h"

namespace leasehold::property {

// leasehold::Compatible asked both ways, so the answer does not depend on
// which mode is called "held".
bool ModesCompatible(LockMode a, LockMode b);

// DESIGN.md's combination rule (IS+S=S, S+IX=SIX, U+IX=UIX, S+IX+U=UIX,
// anything+X=X), written independently of the engine so that the model does
// not inherit an engine mistake.
LockMode ExpectedCombine(LockMode a, LockMode b);

// One wait-for edge, with the resource it is about.
struct WaitEdge {
  SessionId waiter = 0;
  SessionId holder = 0;
  std::string ns;
  std::string principal;
  std::string resource;
};

// The edges leaving queue entry `index` of `info`.
std::vector<WaitEdge> EdgesFrom(const LockInfo& info, std::size_t index);
// All edges of the table.
std::vector<WaitEdge> WaitForGraph(const std::vector<LockInfo>& locks);
// A cycle of sessions (first == last omitted), if the edges contain one.
std::optional<std::vector<SessionId>> FindCycle(
    const std::vector<WaitEdge>& edges);

// Whether a new request of `session` for `target` would be granted at once
// on `info` (null: nobody holds or waits there). `conversion`: the session
// already holds the resource.
bool GrantableAtOnce(const LockInfo* info, SessionId session, LockMode target,
                     bool conversion);
// `info` with `waiter` queued where a new request goes: after the last
// conversion if it is one, else last.
LockInfo WithWaiter(LockInfo info, const WaitingLockInfo& waiter);

// Each check returns a description of the first violation, empty if none.
// Sorted by (ns, principal, resource), no idle resource, counts above zero,
// one entry per (session, owner), one parked request per session,
// conversions queued before non-conversions.
std::string CheckWellFormed(const std::vector<LockInfo>& locks);
// (a) No two sessions hold incompatible modes on one resource.
std::string CheckCompatibleHolders(const std::vector<LockInfo>& locks);
// (b) No waiter that could be granted is left waiting.
std::string CheckNoGrantableWaiter(const std::vector<LockInfo>& locks);
// (c) No wait-for cycle.
std::string CheckNoWaitCycle(const std::vector<LockInfo>& locks);
// All of the above.
std::string CheckLockTable(const std::vector<LockInfo>& locks);

// A readable dump of the table, for failure messages.
std::string DescribeLocks(const std::vector<LockInfo>& locks);
std::string ShortModeName(LockMode mode);  // "IS", "S", ..., "SIX", "-"

}  // namespace leasehold::property

#endif  // LEASEHOLD_TESTS_PROPERTY_INVARIANTS_H_
