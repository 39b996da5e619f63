// LockManager: the policy of application locks (docs/lock-manager.md) over
// the LockTable: who is granted when, who waits, wait timeouts, deadlock
// detection and its victims, and the results of parked requests. It owns
// the lock table, the parked requests by id, the deadlock detector and the
// finished waits. Internal to the engine; single-threaded.
//
// Its callers check sessions, names, modes and transactions first; the
// manager decides on locks only. A parked request is decided later, by the
// command that frees its way (a release, a cancel, another's timeout); its
// decision goes to the request being parked if it is decided at once (a
// deadlock resolved inline), to its acquire-all call if it belongs to one
// (TakeCallStep, which AcquireAllCalls drains), or else to the finished waits
// (TakeFinished).
#ifndef LEASEHOLD_ENGINE_LOCK_MANAGER_H_
#define LEASEHOLD_ENGINE_LOCK_MANAGER_H_

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/deadline_queue.h"
#include "engine/deadlock_detector.h"
#include "engine/engine_types.h"
#include "engine/events.h"
#include "engine/journal.h"
#include "engine/lock_table.h"
#include "engine/reserved_ids.h"

namespace leasehold::engine {

// How a lock request that cannot be granted at once may wait.
struct WaitTerms {
  bool may_wait = true;  // false: refuse with kTimeout at once
  std::optional<Time> deadline = std::nullopt;  // none: without limit
  // The id to park under; 0 for a new one, which Acquire then sets here
  // (even when the request is decided while it parks). An acquire-all call
  // parks each of its locks under the call's one id.
  WaitId wait = 0;
  // The request belongs to an acquire-all call: its decision goes to
  // TakeCallStep, not to TakeFinished.
  bool for_call = false;
  // The grant's hold limit (engine_types.h, "Hold limits"); 0: none.
  Duration max_hold{0};
};

// `name` in double quotes, for messages. Appended piece by piece: GCC 12
// at -O3 reports a false -Wrestrict for "\"" + std::string(...) (its bug
// 105329).
std::string QuotedName(std::string_view name);

// The decision on a parked request of an acquire-all call.
struct CallStep {
  WaitId wait = 0;
  AcquireOutcome outcome;  // `wait` empty: decided
};

class LockManager {
 public:
  // Not owned; `events` may be null. Wait timeouts go into `deadlines` as
  // kWaitTimeout; fences come from `fences`; lock rows go to `journal`.
  LockManager(FenceSource* fences, DeadlineQueue* deadlines,
              JournalBatch* journal, EventSink* events);
  LockManager(const LockManager&) = delete;
  LockManager& operator=(const LockManager&) = delete;

  // A checked request of `s`: granted at once, refused (kTimeout when it may
  // not wait or its deadline has passed; kDeadlock as a cycle's victim), or
  // parked (`wait` set; the id in the outcome). Parking first resolves
  // every cycle the request closes, so a parked request may come back
  // decided (kGrantedAfterWait once a victim made way). kWrongKind (nothing
  // changes) when the name is a semaphore in use.
  Result<AcquireOutcome> Acquire(Time now, Session* s, const LockKey& key,
                                 LockMode mode, LockOwner owner,
                                 WaitTerms& terms);
  // The refusal of a lock request on `key` when it names a semaphore in use.
  Status CheckIsLock(const LockKey& key);

  // --- Semaphores (lock_manager_semaphores.cc) -----------------------------
  // As Acquire, for `permits` of the semaphore `key` of `limit` permits
  // (both checked in range by the caller). Errors, nothing changed:
  // kWrongKind, kLimitMismatch, kBadRequest (never grantable).
  Result<AcquireOutcome> AcquirePermits(Time now, Session* s,
                                        const LockKey& key,
                                        std::uint32_t permits,
                                        std::uint32_t limit, LockOwner owner,
                                        WaitTerms& terms);
  // Gives back `permits` (0: all) of what `s` holds as `owner`; returns
  // what it still holds. kNotHeld, kBadRequest, kWrongKind, kWaitPending.
  Result<std::uint32_t> ReleasePermits(Time now, Session* s, const LockKey& key,
                                       LockOwner owner, std::uint32_t permits);
  std::vector<SemaphoreInfo> ListSemaphores(std::string_view ns) const;
  // The semaphore `key` names, if it is in use.
  std::optional<SemaphoreInfo> GetSemaphore(const LockKey& key);

  // --- Lock-delay (NamespaceOptions::lock_delay; lock_delay.cc) -----------
  void SetLockDelay(std::string_view ns, Duration delay);
  // `s` is about to lose what it holds without having given it back (it
  // expired, or an administrator ended it): in lock-delay namespaces, its
  // locks and permits are held back from everyone until the delay ends,
  // and that end is journaled. Call before the releases.
  void HoldBackAll(Time now, Session* s);
  // After a restart, from the journaled end of the latest delay: lock-delay
  // namespaces grant nothing new until `until`.
  void HoldBackAfterRestart(Time until);
  // The kLockDelayEnd deadline of hold `hold` (0: the restart's).
  void EndHold(Time at, std::uint64_t hold);
  // The refusal of a request from `s` while it waits (s->waiting) already.
  static Status WaitPending(const Session* s);

  // --- Hold limits and breaks (hold_limits.cc) ----------------------------
  void SetMaxHold(std::string_view ns, Duration limit);
  // The hold limit of a request in `ns` that asked for `asked` (0: none):
  // the namespace's when it asked for none. kBadRequest for a negative one
  // or one longer than the namespace's.
  Result<Duration> HoldLimitFor(std::string_view ns, Duration asked) const;
  // The kHoldLimit deadline `limit`: its grant is taken back.
  void ExpireHold(Time at, std::uint64_t limit);
  // An administrator's break: takes back everything `s` holds on `key` (a
  // lock, or a semaphore's permits when `semaphore`), each owner's grant as
  // one. kNotHeld when it holds nothing there; kWrongKind for the other
  // kind's name.
  Result<std::vector<BrokenHold>> Break(Time now, Session* s,
                                        const LockKey& key, bool semaphore);
  // What `s` lost since it was last told, oldest first; the news leaves
  // the journal (its rows are deleted) as it is told.
  std::vector<LostHold> TakeLost(Session* s);
  std::uint64_t holds_expired() const { return holds_expired_; }
  std::uint64_t holds_broken() const { return holds_broken_; }

  // Drops one reference `s` holds as `owner`. kNotHeld; kWaitPending when
  // `s` waits to convert its lock on this resource.
  Status Release(Time now, Session* s, const LockKey& key, LockOwner owner);
  // Drops one reference if `s` holds the lock (acquire-all's undo).
  void ReleaseIfHeld(Time now, Session* s, const LockKey& key, LockOwner owner);
  // How a release of all of a session's locks reaches the journal.
  enum class RowDeletes : std::uint8_t {
    kEach,             // one kDeleteLock per row
    kBySessionDelete,  // none: the session's kDeleteSession removes them
  };
  // Releases every lock `s` holds as `owner`, then lets waiters move up.
  void ReleaseAll(Time now, Session* s, LockOwner owner,
                  RowDeletes deletes = RowDeletes::kEach);
  // The end of the transaction of `s`: its parked request ends with -2 if
  // Transaction-owned or converting a Transaction-owned lock, then every
  // Transaction-owned lock is released.
  void EndTransaction(Time now, Session* s,
                      RowDeletes deletes = RowDeletes::kEach);

  // --- Durability ---------------------------------------------------------
  // Locks of `ns` are kept in memory only (true) or journaled (the
  // default). Applies to resources that have no holder or waiter yet.
  void SetMemoryNamespace(std::string_view ns, bool memory);
  bool IsMemoryNamespace(std::string_view ns) const {
    return !memory_namespaces_.empty() && memory_namespaces_.contains(ns);
  }
  // Brings back a journaled grant of `s`. kBadRequest for a row that breaks
  // the rules: no mode or a bad one, a count of 0, held already, or in
  // conflict with another session's restored grant.
  // A row with `lost` set brings back the news of a loss instead.
  Status Restore(Session* s, const LockKey& key, const LockRow& row);
  // `s` was restored having asked for memory locks: they are gone, and
  // memory namespaces grant nothing until it is told or ends.
  void QuietFor(Session* s);
  // `s` is told (its keep-alive) or ends; returns whether it was owed the
  // news. The last one ends the quiet period: waiters there move up.
  bool EndQuietFor(Time now, Session* s);
  std::size_t sessions_owed_news() const { return owed_news_; }

  // The mode `s` holds as `owner`; kNoLock if none.
  LockMode Held(Session* s, const LockKey& key, LockOwner owner);
  // Whether Acquire would grant at once.
  bool WouldGrant(Session* s, const LockKey& key, LockMode mode,
                  LockOwner owner);

  // End a parked request with -2; false when there is none.
  bool Cancel(Time now, Session* s);
  bool CancelWait(Time now, WaitId wait);
  // The kWaitTimeout deadline of `wait`, already taken from the queue.
  void TimeOut(Time at, WaitId wait);

  std::optional<WaitId> WaitOf(const Session* s) const;

  // Decisions on parked requests of acquire-all calls, in order.
  bool has_call_steps() const { return !call_steps_.empty(); }
  CallStep TakeCallStep();
  // Finished waits since the last call, in order; Finish adds one (an
  // acquire-all call's end).
  std::vector<FinishedWait> TakeFinished() {
    return std::exchange(finished_, {});
  }
  void Finish(FinishedWait&& done) { finished_.push_back(std::move(done)); }

  // Locks of `ns` (all when empty), sorted by (ns, principal, resource).
  std::vector<LockInfo> List(std::string_view ns) const;
  // The lock `key` names, if it is in use; none for a semaphore.
  std::optional<LockInfo> GetLock(const LockKey& key);
  // Adds each namespace's resources with a holder or a waiter to `out`.
  void CountByNamespace(
      std::map<std::string, NamespaceInfo, std::less<>>& out) const;

  std::size_t resource_count() const { return table_.resource_count(); }
  // Journals `key`'s grant of (s, owner) as it is now, or its absence:
  // an acquire-all call that succeeded makes its locks durable here, all in
  // the step that answers it.
  void JournalHeld(Session* s, const LockKey& key, LockOwner owner);

  std::size_t waiting() const { return waits_.size(); }
  std::uint64_t deadlocks() const { return deadlocks_; }
  std::uint64_t timeouts() const { return timeouts_; }

 private:
  struct Decision {
    bool grantable = false;
    bool conversion = false;  // the session already holds the resource
    LockMode target = LockMode::kNoLock;
  };

  Decision Decide(Resource* r, Session* s, LockOwner owner, LockMode mode);
  Decision DecidePermits(Resource* r, Session* s, std::uint32_t permits);
  // The semaphore's grant pass: strictly in queue order, while they fit.
  void GrantPermitWaiters(Resource* r, Time now);
  Grant* GrantPermits(Resource* r, Session* s, LockOwner owner,
                      std::uint32_t permits, Time now, Duration max_hold);
  SemaphoreInfo DescribeSemaphore(const Resource* r,
                                  const DecodedKey& key) const;
  Duration LockDelayOf(std::string_view ns) const;
  // Holds back what `g` holds on its resource, if its namespace has a
  // lock-delay.
  void HoldBack(const Grant* g, Time now);
  // A restart's hold covers `r` (its namespace has a lock-delay).
  bool RestartHolds(const Resource* r) const;
  // No grant on `r` now: a lock held back, or the restart's hold.
  bool HeldBack(const Resource* r) const {
    return r->held_back || (restart_hold_until_ && RestartHolds(r));
  }
  static Status WrongKind(const LockKey& key, const Resource* r);
  // `for_call`: a lock of an acquire-all call, journaled only when the
  // call succeeds (JournalHeld), so that a restart never brings back part
  // of a call that was not answered.
  Grant* GrantTo(Resource* r, Session* s, LockOwner owner, LockMode mode,
                 Time now, bool for_call, Duration max_hold);
  // Parks a request that `d` says must wait, into `out`; `permits` for a
  // semaphore's.
  void Park(Time now, Session* s, Resource* r, LockOwner owner, LockMode mode,
            std::uint32_t permits, const Decision& d, WaitTerms& terms,
            AcquireOutcome& out);
  // A refused request that may not wait (kTimeout), into `out`.
  void RefuseAtOnce(Time now, Session* s, Resource* r, LockOwner owner,
                    LockMode mode, std::uint32_t permits, AcquireOutcome& out);
  void Announce(const Waiter* w, Time now);
  // Ends a parked request without a grant, then lets others move up.
  void AbortWait(Waiter* w, AcquireResult result, Time now,
                 const DeadlockReport* report);
  // Removes `w` from the queue and the indexes.
  void Forget(Waiter* w);
  // Hands the decision on parked request `wait` (of `session`) to where it
  // goes (see the header comment), built in place: `g` is the grant, if
  // any, and `report` the deadlock, if any.
  void Deliver(WaitId wait, bool for_call, SessionId session,
               AcquireResult result, const Grant* g,
               const DeadlockReport* report);
  // The grant pass: grants every waiter the relaxed-FIFO rule allows.
  void GrantWaiters(Resource* r, Time now);
  void GrantWaiter(Waiter* w, Time now);
  // Drops one reference of `g`; at zero the grant goes and waiters move up.
  void DropReference(Grant* g, Time now);

  static Session* ChooseVictim(const std::vector<CycleEdge>& cycle,
                               Session* closer);
  static DeadlockReport MakeReport(const std::vector<CycleEdge>& cycle,
                                   const Session* victim);
  LockInfo Describe(const Resource* r, const DecodedKey& key) const;
  Event LockEvent(EventType type, Time now, const Session* s, const Resource* r,
                  LockOwner owner) const;
  void Emit(const Event& e) {
    if (events_ != nullptr) events_->OnEvent(e);
  }
  // A new journal entry of `kind` for the lock row of (session, owner, key),
  // the rest of the row left for the caller.
  LockRow& JournalLockRow(JournalEntry::Kind kind, SessionId session,
                          LockOwner owner, const LockKey& key);
  // Journals `g` as it now is (kPutLock), or its removal (kDeleteLock).
  void JournalGrant(const Grant* g, JournalEntry::Kind kind);
  // Brings `g`'s hold limit to now + `max_hold` if that is sooner (or
  // gives it one); nothing for 0.
  void LimitHold(Grant* g, Duration max_hold, Time now);
  static std::optional<Time> HoldLimitOf(const Grant* g) {
    if (g->hold_limit == 0) return std::nullopt;
    return g->hold_until;
  }
  // Removes `g` from the table, and its hold limit from the deadlines.
  void RemoveGrant(Grant* g);
  // Takes `g` back from its session (a hold limit, a break), ending first
  // the session's parked request on that name; tells the session at its
  // next keep-alive.
  void TakeBack(Grant* g, Time now, LostReason reason);
  // Gives `g` the hold limit `until` (a new deadline).
  void SetHoldLimit(Grant* g, Time until);
  // Restore of a row that records a loss.
  Status RestoreLoss(Session* s, const LockKey& key, const LockRow& row);
  // While restored sessions are owed news of lost memory locks, memory
  // resources grant nothing.
  bool Quiet(const Resource* r) const { return r->memory && owed_news_ > 0; }

  FenceSource* fences_;
  DeadlineQueue* deadlines_;
  JournalBatch* journal_;
  EventSink* events_;
  std::set<std::string, std::less<>> memory_namespaces_;
  std::size_t owed_news_ = 0;
  LockTable table_;
  DeadlockDetector detector_;
  std::unordered_map<WaitId, Waiter*> waits_;
  WaitId last_wait_id_ = 0;
  // While a request is parked, its own decision (a deadlock resolved at
  // once) goes straight into its outcome.
  WaitId inline_wait_ = 0;
  AcquireOutcome* inline_out_ = nullptr;
  std::map<std::string, Duration, std::less<>> lock_delays_;
  // A running lock-delay: what it holds back, until when.
  struct Hold {
    Resource* resource;
    Time until;
    std::uint32_t permits;  // a semaphore's; 0 for a lock
  };
  std::unordered_map<std::uint64_t, Hold> holds_;
  std::uint64_t last_hold_id_ = 0;
  Time journaled_hold_until_{};
  std::optional<Time> restart_hold_until_;
  std::deque<CallStep> call_steps_;
  std::vector<FinishedWait> finished_;
  std::uint64_t deadlocks_ = 0;
  std::uint64_t timeouts_ = 0;
  std::map<std::string, Duration, std::less<>> max_holds_;
  std::unordered_map<std::uint64_t, Grant*> hold_limits_;
  std::uint64_t last_hold_limit_ = 0;
  std::uint64_t holds_expired_ = 0;
  std::uint64_t holds_broken_ = 0;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_LOCK_MANAGER_H_
