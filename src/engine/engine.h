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
#ifndef LEASEHOLD_ENGINE_ENGINE_H_
#define LEASEHOLD_ENGINE_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/engine_types.h"
#include "engine/events.h"
#include "engine/journal.h"
#include "engine/lock_types.h"
#include "engine/outbox.h"
#include "engine/records.h"

namespace leasehold {

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
  // Moves expiry to now + ttl. Returns the new expiry, whether the
  // session's memory locks were lost at a restart, and what it lost to hold
  // limits and breaks since it was last told (see KeepAliveOutcome).
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
  // One lock, if it is in use (held, awaited or held back by a lock-delay);
  // none for a semaphore's name.
  std::optional<LockInfo> GetLock(Time now, const LockKey& key);

  // --- Breaks (engine_types.h, "Hold limits") ------------------------------
  // The administrator's forced release of what `session` holds on one lock
  // (both owners' grants), as at a hold limit but with event applock.broken
  // (semaphore.broken): a lock-delay applies, the session's parked request
  // on that name ends with -2, its next keep-alive lists the loss. Returns
  // what it held. kSessionNotFound; kNotHeld when it holds nothing there;
  // kWrongKind for a name of the other kind; name errors.
  Result<std::vector<BrokenHold>> BreakLock(Time now, SessionId session,
                                            const LockKey& key);
  Result<std::vector<BrokenHold>> BreakSemaphore(Time now, SessionId session,
                                                 const LockKey& key);

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

#endif  // LEASEHOLD_ENGINE_ENGINE_H_
