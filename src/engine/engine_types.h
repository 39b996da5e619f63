// The engine's value types: what its commands take (requests, options) and
// what they answer (outcomes, infos, stats). The commands themselves are
// Engine's (engine/engine.h); the engine's units share these types and
// include this header, never engine.h.
#ifndef LEASEHOLD_ENGINE_ENGINE_TYPES_H_
#define LEASEHOLD_ENGINE_ENGINE_TYPES_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/lock_types.h"
#include "engine/records.h"

namespace leasehold {

// Identity of an application lock. Locks under different namespaces or
// principals never conflict. Names compare byte for byte.
struct LockKey {
  std::string_view ns;
  std::string_view principal = "public";
  std::string_view resource;
};

// A lock request's timeout: kWaitForever (-1), 0 (never wait) or n > 0 ms.
inline constexpr std::chrono::milliseconds kWaitForever{-1};

// The longest ttl of a session or a lease: 100 years. Longer ones are
// refused, as their expiry would not fit a Time.
inline constexpr std::chrono::milliseconds kLongestTtl =
    std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::years(100));
// kBadRequest, naming ttl_ms, unless 1 ms <= ttl <= kLongestTtl.
Status ValidateTtl(std::chrono::milliseconds ttl);

struct SessionOptions {
  std::string name;                  // shown to people; may be empty
  std::chrono::milliseconds ttl{0};  // 1..kLongestTtl; expires ttl after
                                     // it opens or was last kept alive
  int deadlock_priority = 0;         // -10..10, as SET DEADLOCK_PRIORITY
  // Who opened it, when the server authenticates callers (empty otherwise).
  // Kept and reported, never interpreted: access rules live in the server.
  std::string caller;
};

struct TransactionInfo {
  TransactionId id = 0;
  Time started_at;
  // Record writes staged so far, and their size as counted for the limits
  // (EngineOptions::max_staged_*). Filled in by GetSession/ListSessions.
  std::size_t staged_writes = 0;
  std::size_t staged_bytes = 0;
  // When it will be rolled back for staying open too long: set once it uses
  // a namespace with NamespaceOptions::max_transaction (the earliest such).
  std::optional<Time> deadline;
};

// What a successful commit applied, in the order the writes were staged.
struct CommitOutcome {
  TransactionId transaction = 0;
  std::vector<AppliedWrite> applied;
};

struct SessionInfo {
  SessionId id = 0;
  std::string name;
  std::chrono::milliseconds ttl{0};
  Time opened_at;
  Time expires_at;
  int deadlock_priority = 0;
  std::string caller;     // as given in SessionOptions
  std::size_t locks = 0;  // granted lock entries (one per owner and resource)
  std::optional<TransactionInfo> transaction;
  std::optional<WaitId> waiting;  // the session's parked request, if any
};

// One edge of a wait-for cycle: `waiter` wants `wanted` on `resource` and
// `holder` stands in its way (holding a conflicting mode, or waiting ahead of
// it for one).
struct WaitForEdge {
  SessionId waiter = 0;
  std::string waiter_name;
  SessionId holder = 0;
  std::string holder_name;
  std::string ns;
  std::string principal;
  std::string resource;
  LockMode wanted = LockMode::kNoLock;
  // > 0: `resource` is a semaphore and the waiter wants this many permits
  // (`wanted` is then kNoLock).
  std::uint32_t permits = 0;
};

struct DeadlockReport {
  std::vector<WaitForEdge> cycle;  // in order; the last edge closes it
  SessionId victim = 0;
};

// Hold limits (docs/api.md, "Hold limits and breaks"): a grant may carry a
// limit, the request's max_hold or else its namespace's
// (NamespaceOptions::max_hold); a request's may not exceed the namespace's
// (kBadRequest). The limit runs from the grant; a re-acquisition,
// conversion or more permits can only bring it nearer (the earliest of the
// grant's and now + the request's). At the limit the server takes the whole
// grant back (every reference, or all the owner's permits): event
// applock.expired (semaphore.expired), a lock-delay as for an expiry, and
// the session's next keep-alive lists it (KeepAliveOutcome::lost); the
// session's parked request on that name ends with -2 first. The limit is
// journaled with the grant, so a restart does not restart it.
struct AcquireRequest {
  SessionId session = 0;
  LockKey key;
  LockMode mode = LockMode::kExclusive;
  LockOwner owner = LockOwner::kTransaction;
  std::chrono::milliseconds timeout = kWaitForever;
  // The longest it may be held (see "Hold limits" above); 0: the
  // namespace's.
  std::chrono::milliseconds max_hold{0};
};

// Semaphores (docs/api.md, "Semaphores"): a name whose holders share at
// most `limit` permits. A name of a namespace and principal is a lock or a
// semaphore while anyone holds or waits for it, never both: a request of the
// other kind is refused (kWrongKind). Everything else follows the rules of
// locks: owners, counted holding (a holder asking again adds permits, as a
// conversion: before new requests), timeouts, cancellation, deadlock
// detection across locks and semaphores, a fence on every grant, durability.
// Waiting is strictly FIFO: nothing passes a request that does not fit yet,
// so a request for many permits is never starved by a stream of small ones.
inline constexpr std::uint32_t kMaxSemaphoreLimit = 1'000'000;

struct SemaphoreRequest {
  SessionId session = 0;
  LockKey key;                // the semaphore's name is key.resource
  std::uint32_t permits = 1;  // 1..limit
  // 1..kMaxSemaphoreLimit. The semaphore takes it from its first request;
  // while anyone holds or waits for it, another limit is refused
  // (kLimitMismatch). Once idle, the next request may set another.
  std::uint32_t limit = 0;
  LockOwner owner = LockOwner::kTransaction;
  std::chrono::milliseconds timeout = kWaitForever;
  // As AcquireRequest::max_hold.
  std::chrono::milliseconds max_hold{0};
};

struct SemaphoreReleaseRequest {
  SessionId session = 0;
  LockKey key;
  LockOwner owner = LockOwner::kTransaction;
  std::uint32_t permits = 0;  // 0: all the owner holds
};

// What Acquire (and AcquireSemaphore) decided at once.
struct AcquireOutcome {
  // Set when the request was parked; its result comes via TakeFinishedWaits.
  std::optional<WaitId> wait;
  // Meaningful when `wait` is empty: kGranted, kTimeout (timeout 0),
  // kDeadlock (this request closed a cycle and was chosen as the victim), or
  // kGrantedAfterWait (it closed a cycle, another session was the victim,
  // and the victim's removal let this request through at once).
  AcquireResult result = AcquireResult::kGranted;
  Fence fence = 0;                    // on a grant
  LockMode held = LockMode::kNoLock;  // the owner's mode after a grant
  // The owner's count after a grant; of a semaphore: the permits it holds.
  std::uint32_t count = 0;
  std::optional<DeadlockReport> deadlock;
};

// Acquire-all: several locks in one call, taken in one canonical order,
// all or nothing, within one timeout (docs/lock-manager.md, "Ordered
// multi-lock").
inline constexpr std::size_t kMaxLocksPerAcquireAll = 1000;

struct WantedLock {
  std::string_view resource;
  LockMode mode = LockMode::kExclusive;
};

struct AcquireAllRequest {
  SessionId session = 0;
  std::string_view ns;
  std::string_view principal = "public";
  LockOwner owner = LockOwner::kTransaction;
  // One budget for the whole call: kWaitForever, 0 (no lock waits) or n ms.
  std::chrono::milliseconds timeout = kWaitForever;
  std::vector<WantedLock> locks;  // in any order; each resource once
  // As AcquireRequest::max_hold, for each lock from its own grant.
  std::chrono::milliseconds max_hold{0};
};

struct AcquiredLock {
  std::string resource;
  LockMode held = LockMode::kNoLock;  // the owner's mode after the grant
  Fence fence = 0;
  std::uint32_t count = 0;  // the owner's count after the grant
};

// How an acquire-all call ended.
struct AcquireAllResult {
  // kGranted, kGrantedAfterWait (some lock waited), or the refusal of the
  // lock that was not granted (kTimeout, kCancelled, kDeadlock).
  AcquireResult result = AcquireResult::kGranted;
  std::vector<AcquiredLock> locks;  // on a grant: all, in canonical order
  std::string refused;              // on a refusal: that lock's resource
  std::size_t released = 0;         // on a refusal: the locks taken and let go
  std::optional<DeadlockReport> deadlock;
  // Not ok when a later lock's request failed (e.g. kTransactionExpired
  // after a wait): the call then answers this error, holding nothing new.
  Status error = Status::Ok();
};

struct AcquireAllOutcome {
  // Set while a lock waits; the result then comes via TakeFinishedWaits
  // (FinishedWait::all), and CancelWait(*wait) cancels the call.
  std::optional<WaitId> wait;
  AcquireAllResult result;  // when `wait` is empty
};

// The final result of a parked request.
struct FinishedWait {
  WaitId wait = 0;
  SessionId session = 0;
  AcquireResult result = AcquireResult::kTimeout;
  Fence fence = 0;                    // on kGrantedAfterWait
  LockMode held = LockMode::kNoLock;  // on kGrantedAfterWait
  std::uint32_t count = 0;            // on kGrantedAfterWait
  std::optional<DeadlockReport> deadlock;
  // Set for an acquire-all call: its whole result (`result` and `deadlock`
  // above are copies of its own). Behind a pointer, so that the many
  // waits of single locks stay small; shared, and never changed.
  std::shared_ptr<const AcquireAllResult> all;
};

struct ReleaseRequest {
  SessionId session = 0;
  LockKey key;
  LockOwner owner = LockOwner::kTransaction;
};

struct GrantedLockInfo {
  SessionId session = 0;
  std::string session_name;
  LockOwner owner = LockOwner::kTransaction;
  LockMode mode = LockMode::kNoLock;
  std::uint32_t count = 0;
  Time since;                      // when the owner first got it
  Fence fence = 0;                 // of the latest grant
  std::optional<Time> hold_until;  // its hold limit, if it has one
};

struct WaitingLockInfo {
  WaitId wait = 0;
  SessionId session = 0;
  std::string session_name;
  LockOwner owner = LockOwner::kTransaction;
  LockMode requested = LockMode::kNoLock;  // the mode asked for
  LockMode target = LockMode::kNoLock;     // the mode held once granted
  bool conversion = false;  // the session already holds this resource
  Time since;
  std::optional<Time> deadline;
};

struct LockInfo {
  std::string ns;
  std::string principal;
  std::string resource;
  std::vector<GrantedLockInfo> granted;
  std::vector<WaitingLockInfo> waiting;  // in queue order
  // Set while a lock-delay holds it back (NamespaceOptions::lock_delay):
  // nothing is granted before then.
  std::optional<Time> lock_delay_until;
};

struct SemaphoreHolderInfo {
  SessionId session = 0;
  std::string session_name;
  LockOwner owner = LockOwner::kTransaction;
  std::uint32_t permits = 0;
  Time since;                      // when the owner first got some
  Fence fence = 0;                 // of the latest grant
  std::optional<Time> hold_until;  // its hold limit, if it has one
};

struct SemaphoreWaiterInfo {
  WaitId wait = 0;
  SessionId session = 0;
  std::string session_name;
  LockOwner owner = LockOwner::kTransaction;
  std::uint32_t permits = 0;  // asked for
  bool conversion = false;    // the session holds some already
  Time since;
  std::optional<Time> deadline;
};

struct SemaphoreInfo {
  std::string ns;
  std::string principal;
  std::string name;
  std::uint32_t limit = 0;
  std::uint32_t held = 0;  // permits held, by all holders
  std::vector<SemaphoreHolderInfo> holders;
  std::vector<SemaphoreWaiterInfo> waiting;  // in queue order
  // Set while a lock-delay holds permits back: `lock_delay_permits` of
  // them (all, after a restart) are out of reach until then.
  std::optional<Time> lock_delay_until;
  std::uint32_t lock_delay_permits = 0;
};

// What one namespace holds now (GET /v1/namespaces, the dashboard).
struct NamespaceInfo {
  std::string ns;
  std::size_t keys = 0;              // keys with a record or a lease
  std::size_t active_checkouts = 0;  // unexpired leases
  std::size_t lock_resources = 0;    // locks with a holder, a waiter or a
                                     // lock-delay
  std::size_t semaphores = 0;        // semaphores in use (as lock_resources)
  std::vector<std::string> topics;   // outbox topics, sorted
};

// A lock, or a semaphore's permits, that a session lost while it lived on:
// the server took it back at its hold limit, or an administrator broke it.
struct LostHold {
  std::string ns;
  std::string principal;
  std::string resource;  // a semaphore's name
  LockOwner owner = LockOwner::kSession;
  bool semaphore = false;
  LostReason reason = LostReason::kHoldLimit;
  Time at;  // when it was taken
};

// What a keep-alive answers.
struct KeepAliveOutcome {
  Time expires_at;
  // The session was restored after a restart having asked for locks in a
  // namespace that keeps them in memory (NamespaceOptions::locks): they are
  // gone. Said once; the session may take such locks again.
  bool locks_lost = false;
  // What it lost since it was last told, oldest first. Said once.
  std::vector<LostHold> lost;
};

// An administrator's break (Engine::BreakLock, BreakSemaphore): what the
// session held there and lost, one entry per owner.
struct BrokenHold {
  LockOwner owner = LockOwner::kSession;
  LockMode mode = LockMode::kNoLock;  // a lock's; kNoLock for permits
  std::uint32_t count = 0;            // references, or permits
  Fence fence = 0;
};

struct EngineStats {
  std::size_t sessions = 0;
  std::size_t open_transactions = 0;
  std::size_t resources = 0;      // resources with a holder or a waiter
  std::size_t granted_locks = 0;  // granted entries
  std::size_t waiting = 0;
  std::uint64_t deadlocks = 0;      // since start
  std::uint64_t timeouts = 0;       // since start
  std::uint64_t holds_expired = 0;  // taken back at a hold limit, since start
  std::uint64_t holds_broken = 0;   // broken by an administrator, since start
  std::uint64_t transactions_expired = 0;        // since start
  std::optional<Time> oldest_transaction_start;  // of the open ones
  std::size_t keys = 0;  // keys with a record or a lease
  std::size_t active_checkouts = 0;
  Fence last_fence = 0;
  // Brought back from the store at start-up.
  std::size_t restored_sessions = 0;
  std::size_t restored_locks = 0;
  // Restored sessions not yet told that their memory locks are gone; while
  // any, memory namespaces grant nothing (NamespaceOptions::locks).
  std::size_t sessions_owed_lock_news = 0;
};

}  // namespace leasehold

#endif  // LEASEHOLD_ENGINE_ENGINE_TYPES_H_
