// The leasehold engine: sessions, transactions and application locks with
// sp_getapplock semantics, as a deterministic state machine.
//
// Contract:
//  - Single-threaded: an Engine must be used by one thread at a time (the
//    server's EngineService puts it behind one mutex). It has no internal
//    locking.
//  - No I/O and no clock: every command takes `now`. Before acting, a command
//    first applies everything that was due at or before `now` (session
//    expiries, wait timeouts), in deadline order. A `now` earlier than one
//    already seen is treated as the latest one seen, so time never goes back.
//  - A lock request that cannot be granted at once is parked as data with its
//    deadline; it never blocks the caller. Its final result arrives later in
//    TakeFinishedWaits(), after whichever command or AdvanceTo() decided it.
//  - A failed command changes nothing. Two exceptions: a Commit refused with
//    kTransactionAborted has rolled the transaction back (see Commit), and a
//    command refused with kTransactionExpired found the transaction past its
//    namespace's longest open time and rolled it back (see "Stale
//    transactions"); and a command refused with kTransactionLost has told
//    the session its transaction was lost at a restart (see Durability).
//  - Every state change is reported to the EventSink, if one is set.
#ifndef LEASEHOLD_ENGINE_H_
#define LEASEHOLD_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/journal.h"
#include "engine/lock_types.h"
#include "engine/outbox.h"
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

struct AcquireRequest {
  SessionId session = 0;
  LockKey key;
  LockMode mode = LockMode::kExclusive;
  LockOwner owner = LockOwner::kTransaction;
  std::chrono::milliseconds timeout = kWaitForever;
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
  Time since;       // when the owner first got it
  Fence fence = 0;  // of the latest grant
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
  Time since;       // when the owner first got some
  Fence fence = 0;  // of the latest grant
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

// What a keep-alive answers.
struct KeepAliveOutcome {
  Time expires_at;
  // The session was restored after a restart having asked for locks in a
  // namespace that keeps them in memory (NamespaceOptions::locks): they are
  // gone. Said once; the session may take such locks again.
  bool locks_lost = false;
};

struct EngineStats {
  std::size_t sessions = 0;
  std::size_t open_transactions = 0;
  std::size_t resources = 0;      // resources with a holder or a waiter
  std::size_t granted_locks = 0;  // granted entries
  std::size_t waiting = 0;
  std::uint64_t deadlocks = 0;                   // since start
  std::uint64_t timeouts = 0;                    // since start
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

enum class EventType : std::uint8_t {
  kSessionOpened,
  kSessionClosed,
  kSessionExpired,
  kTransactionBegun,
  kTransactionCommitted,
  kTransactionRolledBack,
  kLockGranted,  // at once or after a wait; `count` is the new count
  kLockWaiting,
  kLockReleased,  // one reference dropped; `count` is what is left
  kLockTimeout,
  kLockCancelled,
  kLockDeadlock,  // `deadlock` is set; `session` is the victim
  // The same for semaphores: `resource` is its name, `count` the owner's
  // permits after the change (waiting: asked for), `limit` its limit.
  kSemaphoreGranted,
  kSemaphoreWaiting,
  kSemaphoreReleased,
  kSemaphoreTimeout,
  kSemaphoreCancelled,
  kSemaphoreDeadlock,
  kCheckoutGranted,   // `holder`, `until`, `fence`
  kCheckoutRenewed,   // `holder`, `until`
  kCheckoutReleased,  // checked in, broken or purged; `holder` was the owner
  kCheckoutExpired,   // the lease ran out (nothing on disk changes)
  kRecordInserted,    // `version`
  kRecordSaved,       // `version`, `holder`
  kRecordDeleted,
  kOperationCompleted,  // at commit; `resource` is the operation id
  kOutboxEnqueued,      // `resource` topic, `key`, `message`
  kOutboxClaimed,       // `holder` consumer, `until`, `count` the attempt
  kOutboxAcked,         // `holder` consumer
  // Rolled back for staying open past `until`, the limit of namespace `ns`
  // (NamespaceOptions::max_transaction).
  kTransactionExpired,
  // Not the engine's: the server announces that its node has become the
  // leader among several (docs/ha.md); `holder` is its URL, `version` its
  // epoch.
  kClusterLeader,
};

// "session.opened", "applock.granted", ... (the names of docs/api.md's events).
std::string_view EventTypeName(EventType type);

// A state change. The string views point into the engine and are valid only
// during EventSink::OnEvent. For records and checkouts, `ns` and `resource`
// name the key.
struct Event {
  EventType type = EventType::kSessionOpened;
  Time at;
  SessionId session = 0;
  std::string_view session_name;
  TransactionId transaction = 0;
  std::string_view ns;
  std::string_view principal;
  std::string_view resource;
  LockOwner owner = LockOwner::kTransaction;
  LockMode mode = LockMode::kNoLock;  // held (granted/released) or wanted
  std::uint32_t count = 0;
  std::uint32_t limit = 0;  // semaphores
  Fence fence = 0;
  std::optional<Time> until;  // wait deadline, or session expiry
  const DeadlockReport* deadlock = nullptr;
  std::string_view holder;    // checkouts and records: the lease owner's name
  std::uint64_t version = 0;  // records
  std::string_view key;       // outbox: the message's deduplication key
  MessageId message = 0;      // outbox
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // Called synchronously inside engine commands. Must not call the engine.
  virtual void OnEvent(const Event& event) = 0;
};

struct EngineOptions {
  // Fences handed out start above this (the store's persisted high-water
  // mark, so fences never repeat across restarts).
  Fence fence_floor = 0;
  // Session ids start above this, and above the restored reservation
  // (RestoreSessionIds), so a stale id never names a new session.
  SessionId session_id_base = 0;
  // Record bodies longer than this are refused with kBodyTooLarge.
  std::size_t max_body_bytes = 1 << 20;
  // Per transaction: at most this many staged writes, holding at most this
  // many bytes (bodies, names and proofs). Beyond: kTransactionTooLarge.
  std::size_t max_staged_writes = 10'000;
  std::size_t max_staged_bytes = 32 << 20;
  // Not owned; may be null. Must outlive the engine.
  EventSink* events = nullptr;
};

class Engine {
 public:
  explicit Engine(EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --- Sessions -----------------------------------------------------------
  // Fails with kBadRequest for a ttl outside 1 ms..kLongestTtl, a priority
  // outside -10..10 or a name longer than 255 characters.
  Result<SessionInfo> OpenSession(Time now, const SessionOptions& options);
  // Moves expiry to now + ttl. Returns the new expiry, and whether the
  // session's memory locks were lost at a restart (see KeepAliveOutcome).
  // kSessionNotFound.
  Result<KeepAliveOutcome> KeepAlive(Time now, SessionId session);
  // Who ends a session: its own client (its locks are free at once), or an
  // administrator (a lock-delay applies, as for an expiry).
  enum class SessionEnd : std::uint8_t { kByClient, kByAdministrator };
  // Ends the session as if it expired: cancels its wait (-2), rolls back its
  // transaction, releases all its locks. kSessionNotFound.
  Status EndSession(Time now, SessionId session,
                    SessionEnd how = SessionEnd::kByClient);
  Status SetDeadlockPriority(Time now, SessionId session, int priority);
  Result<SessionInfo> GetSession(Time now, SessionId session);
  std::vector<SessionInfo> ListSessions(Time now);

  // --- Transactions (one open per session) -------------------------------
  // kTransactionOpen if one is open.
  Result<TransactionInfo> BeginTransaction(Time now, SessionId session);
  // Stale transactions: a namespace may limit how long a transaction stays
  // open (NamespaceOptions::max_transaction). A transaction becomes bound by
  // it when it first uses the namespace: a Transaction-owned acquire, a
  // staged write, an operation's begin or completion, a staged message.
  // Its deadline is then started_at + the limit (the earliest, if several).
  // At the deadline it is rolled back as by Rollback (its parked
  // Transaction-owned request ends with -2) with event transaction.expired
  // (`ns`, `until`). Until the session begins another, the calls that need
  // a transaction fail with kTransactionExpired, which names it.
  //
  // Both release every Transaction-owned lock of the session. The session's
  // parked request ends first with -2 if it is Transaction-owned, or if it
  // converts a lock the transaction holds (its target would be stale).
  // kNoTransaction if none is open.
  //
  // Commit applies the staged writes (see "Staged record writes") in the
  // order they were staged, then releases the locks, all in one command:
  // one journal batch, so one atomic store append. It first checks every
  // staged write against the state the earlier ones leave; if any can no
  // longer be applied it applies none, rolls the transaction back (staged
  // writes discarded, Transaction-owned locks released, event
  // transaction.rolled_back) and fails with kTransactionAborted, whose
  // message names the write and why. Rollback discards the staged writes.
  Result<CommitOutcome> CommitTransaction(Time now, SessionId session);
  // CommitTransaction without the list of applied writes.
  Status Commit(Time now, SessionId session);
  Status Rollback(Time now, SessionId session);

  // --- Application locks ---------------------------------------------------
  // Errors (nothing changes): kSessionNotFound, kNoTransaction (Transaction
  // owner without a transaction), kBadTimeout (< -1), kBadMode (kNoLock or a
  // combined mode), kWaitPending (the session already waits), name errors.
  Result<AcquireOutcome> Acquire(Time now, const AcquireRequest& request);
  // Takes request.locks sorted bytewise by resource, one after another, each
  // as Acquire would (the same owner, principal and session), under one
  // deadline: now + timeout. A lock that must wait parks the call; the call
  // keeps one WaitId however many of its locks wait. All or nothing: when a
  // lock is refused (timeout, cancel, deadlock), or its request fails, the
  // locks the call was granted are released, newest first, one reference
  // each (a re-acquisition is counted, so the undo drops just that).
  // Refused before anything changes, with kBadRequest: no locks, more than
  // kMaxLocksPerAcquireAll, a resource listed twice, a lock the session
  // holds in a weaker mode (a release cannot convert it back); and the
  // errors of Acquire.
  Result<AcquireAllOutcome> AcquireAll(Time now,
                                       const AcquireAllRequest& request);
  // Drops one reference. kNotHeld when the owner holds nothing there;
  // kNoTransaction for owner Transaction outside a transaction (as
  // sp_releaseapplock); kWaitPending when the session is waiting to convert
  // its lock on this same resource (cancel the wait first).
  Status Release(Time now, const ReleaseRequest& request);
  // APPLOCK_MODE: the owner's current mode, kNoLock if none (also for a
  // semaphore's name: no lock is held there; Test answers false for it).
  Result<LockMode> Mode(Time now, SessionId session, const LockKey& key,
                        LockOwner owner);
  // APPLOCK_TEST: whether Acquire would grant at once. Acquires nothing.
  Result<bool> Test(Time now, SessionId session, const LockKey& key,
                    LockMode mode, LockOwner owner);
  // Ends the session's parked request with -2. Returns whether one was
  // waiting. kSessionNotFound.
  Result<bool> Cancel(Time now, SessionId session);
  // Ends one parked request with -2 (e.g. its client hung up). Returns
  // whether it was still waiting.
  bool CancelWait(Time now, WaitId wait);

  // Locks of one namespace (all namespaces when `ns` is empty), sorted by
  // (ns, principal, resource). Semaphores are not locks: ListSemaphores.
  std::vector<LockInfo> ListLocks(Time now, std::string_view ns);

  // --- Semaphores (see SemaphoreRequest) -----------------------------------
  // As Acquire; the outcome's `count` is the permits the owner holds after
  // a grant, `held` is kNoLock. Errors (nothing changes): those of Acquire
  // but kBadMode, and kBadRequest for permits or a limit out of range, or
  // for more permits than the limit with what the session holds there
  // already (never grantable); kWrongKind when the name is a lock in use;
  // kLimitMismatch when the semaphore is in use with another limit.
  Result<AcquireOutcome> AcquireSemaphore(Time now,
                                          const SemaphoreRequest& request);
  // Gives back `permits` (all, for 0) of what the owner holds; returns what
  // it still holds. kNotHeld when it holds none; kBadRequest for more than
  // it holds; kNoTransaction for owner Transaction outside a transaction;
  // kWrongKind for a lock's name; kWaitPending while the session waits for
  // more permits of it.
  Result<std::uint32_t> ReleaseSemaphore(
      Time now, const SemaphoreReleaseRequest& request);
  // Semaphores in use in `ns` (all when empty), sorted as ListLocks.
  std::vector<SemaphoreInfo> ListSemaphores(Time now, std::string_view ns);
  // One semaphore, if it is in use (held, awaited or held back).
  std::optional<SemaphoreInfo> GetSemaphore(Time now, const LockKey& key);
  // Every namespace that has keys, locks or outbox topics, sorted by name.
  std::vector<NamespaceInfo> ListNamespaces(Time now);

  // --- Records and checkouts (docs/api.md, "Records and checkouts") ------
  // Each command is one atomic decision. Name errors (namespace, key, owner,
  // token) are refused before anything changes.
  //
  // Fenced writes (docs/api.md, "Fenced writes"): an insert, save or delete
  // may carry `fence`, a fence from a grant the writer holds (0: none). The
  // key remembers the highest fence that wrote it (its write fence, kept
  // after a delete as a tombstone); a lower one is kStaleFence, so a writer
  // whose lock was taken over cannot overwrite its successor's work. A
  // fence above every fence handed out is kBadRequest. A save or delete
  // with a fence and no owner or token needs no lease of its own, only
  // that nobody has the key checked out (else refused kNotOwner).
  void SetNamespaceOptions(std::string_view ns, NamespaceOptions options);
  // Creates a record with version 1. kExists if the key has a record;
  // kBodyTooLarge; kStaleFence.
  Result<std::uint64_t> InsertRecord(Time now, RecordKey key,
                                     std::string_view body, Fence fence = 0);
  // kNotFound when the key has neither a record, a lease nor a write fence.
  Result<RecordView> GetRecord(Time now, RecordKey key);
  // kBadRequest for a limit outside 1..1000.
  Result<RecordPage> ListRecords(Time now, const ListRecordsQuery& query);
  // Granted when there is no lease, it has expired, or the caller holds it
  // (a renewal: same token and fence, new expiry). kBadRequest for a ttl
  // outside 1 ms..kLongestTtl or an empty token.
  Result<CheckoutOutcome> Checkout(Time now, const CheckoutRequest& request);
  // Replaces the body and bumps the version. Needs the caller's unexpired
  // lease (or a fence-only proof). kNotFound without a record;
  // kBodyTooLarge; kStaleFence (checked before if_version).
  Result<WriteOutcome> Save(Time now, RecordKey key, LeaseProof proof,
                            std::string_view body,
                            std::optional<std::uint64_t> if_version,
                            Fence fence = 0);
  // Ends the caller's unexpired lease; the key is then free with no owner.
  // kNotFound when the key is unknown.
  Result<WriteOutcome> Checkin(Time now, RecordKey key, LeaseProof proof);
  // Removes the record and its lease; needs the caller's unexpired lease
  // (or a fence-only proof). kNotFound without a record; kStaleFence. A key
  // with a write fence keeps it.
  Result<WriteOutcome> DeleteRecord(Time now, RecordKey key, LeaseProof proof,
                                    Fence fence = 0);
  // Clears every lease of `ns` that expired at least `older_than` ago.
  // Returns how many. kBadRequest for a negative age.
  Result<std::size_t> PurgeExpired(Time now, std::string_view ns,
                                   std::chrono::milliseconds older_than);
  // The administrator's forced release. Returns whether a lease was there.
  // kNotFound when the key is unknown.
  Result<bool> BreakCheckout(Time now, RecordKey key);

  // --- Staged record writes (in a transaction) ----------------------------
  // The transactional forms of InsertRecord, Save and DeleteRecord. They
  // change nothing that anyone can see: the write is kept with the
  // session's open transaction and applied by Commit (events such as
  // record.saved come then), or discarded by Rollback, EndSession and
  // session expiry. GetRecord and ListRecords never show staged writes, not
  // even to the staging session.
  //
  // A write is validated when staged, against the committed state, as far as
  // it can be: names, body size, the limits; an insert needs a key without a
  // record (kExists); a save or delete needs a record (kNotFound) and the
  // caller's unexpired lease (else not staged, with the refusal reason).
  // Commit checks again, against the state the transaction's earlier writes
  // leave: an insert still needs a key without a record; a save or delete
  // needs the record and the very lease it was staged under (same fence:
  // renewed is fine; expired, broken, checked in or taken again is not; a
  // fence-only write needs the key not checked out), a save's if_version
  // must equal the version at that point, and a fenced write's fence may
  // not be below the write fence at that point.
  //
  // Errors (nothing staged): kSessionNotFound, kNoTransaction,
  // kTransactionTooLarge, name errors, kBodyTooLarge, kExists, kNotFound,
  // kStaleFence.
  Result<StageOutcome> StageInsert(Time now, SessionId session, RecordKey key,
                                   std::string_view body, Fence fence = 0);
  Result<StageOutcome> StageSave(Time now, SessionId session, RecordKey key,
                                 LeaseProof proof, std::string_view body,
                                 std::optional<std::uint64_t> if_version,
                                 Fence fence = 0);
  Result<StageOutcome> StageDelete(Time now, SessionId session, RecordKey key,
                                   LeaseProof proof, Fence fence = 0);

  // --- Idempotent operations (docs/outbox.md) -------------------------------
  // Both need the session's open transaction (kNoTransaction), and refuse
  // name errors (namespace, op_id) before anything changes.
  //
  // What the committed state holds for the operation: kNew, or kCompleted
  // with the stored outcome. Takes no lock: two transactions may both see
  // kNew; the first to commit its CompleteOperation wins, and the other's
  // commit is refused (kTransactionAborted, "completed"). Take an
  // application lock on the operation id first to make the second wait.
  Result<OperationStatus> BeginOperation(Time now, SessionId session,
                                         OperationKey key);
  // Stages the outcome (JSON text, at most max_body_bytes), applied at
  // commit with the transaction's other staged writes. kExists when the
  // operation is completed already, or this transaction completes it
  // already; kBodyTooLarge; kTransactionTooLarge.
  Result<StageOutcome> CompleteOperation(Time now, SessionId session,
                                         OperationKey key,
                                         std::string_view outcome);

  // --- Outbox (docs/outbox.md) -----------------------------------------------
  // Enqueues a message, at once, or staged in request.session's open
  // transaction (kSessionNotFound, kNoTransaction, kTransactionTooLarge).
  // A key already enqueued in (ns, topic) — committed, or staged earlier in
  // the same transaction — is not enqueued again: the answer is that
  // message's id with `duplicate`. A staged message gets its id now; if
  // another transaction commits the same key first, this one's commit skips
  // it (AppliedWrite::duplicate). Errors: name errors, kBodyTooLarge.
  Result<EnqueueOutcome> Enqueue(Time now, const EnqueueRequest& request);
  // Claims up to request.max deliverable messages, oldest first: pending
  // ones and those whose claim ran out, below the namespace's
  // outbox_max_attempts. Each gets the request's token, a lease until
  // now + lease and one more attempt. kBadRequest for max outside 1..1000,
  // lease <= 0; name errors.
  Result<std::vector<ClaimedMessage>> Claim(Time now,
                                            const ClaimRequest& request);
  // Acknowledges a claimed message: done for ever. Refused (acked false,
  // with the reason) when the claim ran out or the token is not the latest
  // claim's. kNotFound for an unknown id in (ns, topic).
  Result<AckOutcome> Ack(Time now, std::string_view ns, std::string_view topic,
                         MessageId id, std::string_view claim_token);
  // Counts of one topic at `now`, and its dead letters.
  Result<OutboxSummary> GetOutbox(Time now, std::string_view ns,
                                  std::string_view topic);

  // --- Durability -----------------------------------------------------------
  // Loads what a Store holds. Only on a new engine, before any command;
  // kBadRequest otherwise or for a row that breaks the rules (e.g. a name).
  // RestoreKey takes one key at a time (fastest in (ns, key) order);
  // RestoreOperation and RestoreMessage one completed operation or outbox
  // message;
  // RestoreFences, RestoreSessionIds and RestoreTransactionIds the store's
  // reservations; Restore does all of them.
  //
  // RestoreSession brings back an open session with a fresh ttl: it
  // expires at now + ttl (keep-alives are not journaled), so restore with
  // the `now` at which the server is about to serve (or start them again
  // with RestartRestoredSessions once loaded). A session whose row
  // has a transaction open had it lost: its staged writes and transaction
  // locks are gone. The next call that needs a transaction (stage, commit,
  // rollback, operation begin or complete, staged enqueue, a Transaction-
  // owned acquire, begin) fails once with kTransactionLost, which names it;
  // calls after that see no transaction.
  //
  // Journaled: a session's row when it opens, its priority changes, and
  // its transaction begins or ends (with the commit's writes, in the same
  // batch); its deletion when it ends or expires; keep-alives are not. A
  // lock row whenever a grant changes (grant, conversion, count, release),
  // in the step that changes it, so a grant is answered once it is durable;
  // not in namespaces that keep locks in memory (NamespaceOptions::locks),
  // where the session's row records that it asked for such a lock.
  Status RestoreKey(Time now, KeyRow&& row);
  Status RestoreOperation(OperationRow&& row);
  Status RestoreMessage(MessageRow&& row);
  Status RestoreSession(Time now, SessionRow&& row);
  // Starts every restored session's fresh ttl again at `now`: a loader that
  // restored them as of the time its load began calls this when the load is
  // done, so that a long load (seconds, for a million locks) does not eat
  // into the ttl their clients were promised.
  Status RestartRestoredSessions(Time now);
  // Brings back a grant of a restored session: its mode, count, fence and
  // since. A Transaction-owned row needs the session's lost transaction; it
  // is held until the session is told (kTransactionLost) or ends.
  // kBadRequest for a row of no restored session, a bad name, mode, owner or
  // count, a grant restored twice, or one that conflicts with another
  // session's. Waiters are never restored.
  Status RestoreLock(LockRow&& row);
  Status RestoreFences(Fence reserved);
  Status RestoreSessionIds(SessionId reserved);
  Status RestoreTransactionIds(TransactionId reserved);
  // The latest end of a lock-delay journaled (microseconds since 1970 UTC;
  // 0: none): until then, lock-delay namespaces grant nothing new.
  Status RestoreLockDelay(std::uint64_t until_us);
  Status Restore(Time now, const DurableState& state);
  // The journal entries made since the last call, in order. A caller must
  // make them durable before it answers the command that made them.
  JournalBatch TakeJournal();
  bool HasJournal() const;

  // --- Time ---------------------------------------------------------------
  // Applies every expiry and timeout due at or before `now`.
  void AdvanceTo(Time now);
  // The earliest instant at which AdvanceTo would change something (a
  // session expiry, a wait timeout, a lease running out).
  std::optional<Time> NextDeadline() const;
  // Results of parked requests decided since the last call, in order.
  std::vector<FinishedWait> TakeFinishedWaits();

  EngineStats Stats() const;

 private:
  // The units that own the state (src/engine/engine.cc); each command above
  // is defined once, there, and sequences them.
  struct Units;
  std::unique_ptr<Units> units_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_ENGINE_H_
