#include "engine/lock_manager.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "engine/transaction_manager.h"

namespace leasehold::engine {
namespace {

// A semaphore's events have their own names.
EventType SemaphoreEventType(EventType lock_type) {
  switch (lock_type) {
    case EventType::kLockGranted:
      return EventType::kSemaphoreGranted;
    case EventType::kLockWaiting:
      return EventType::kSemaphoreWaiting;
    case EventType::kLockReleased:
      return EventType::kSemaphoreReleased;
    case EventType::kLockTimeout:
      return EventType::kSemaphoreTimeout;
    case EventType::kLockCancelled:
      return EventType::kSemaphoreCancelled;
    case EventType::kLockDeadlock:
      return EventType::kSemaphoreDeadlock;
    case EventType::kLockExpired:
      return EventType::kSemaphoreExpired;
    case EventType::kLockBroken:
      return EventType::kSemaphoreBroken;
    default:
      return lock_type;
  }
}

}  // namespace

LockManager::LockManager(FenceSource* fences, DeadlineQueue* deadlines,
                         JournalBatch* journal, EventSink* events)
    : fences_(fences),
      deadlines_(deadlines),
      journal_(journal),
      events_(events) {}

// --- Requests
// -----------------------------------------------------------------

Result<AcquireOutcome> LockManager::Acquire(Time now, Session* s,
                                            const LockKey& key, LockMode mode,
                                            LockOwner owner, WaitTerms& terms) {
  Resource* r = table_.FindOrCreate(key);
  if (r->idle()) {
    r->memory = IsMemoryNamespace(key.ns);  // new
  } else if (r->limit != 0) {
    return std::unexpected(WrongKind(key, r));
  }
  const Decision d = Decide(r, s, owner, mode);
  AcquireOutcome out;
  if (d.grantable) {
    const Grant* g =
        GrantTo(r, s, owner, mode, now, terms.for_call, terms.max_hold);
    out.fence = g->fence;
    out.held = g->mode;
    out.count = g->count;
    return out;
  }
  if (!terms.may_wait || (terms.deadline && *terms.deadline <= now)) {
    RefuseAtOnce(now, s, r, owner, mode, 0, out);
    return out;
  }
  Park(now, s, r, owner, mode, 0, d, terms, out);
  return out;
}

Status LockManager::CheckIsLock(const LockKey& key) {
  const Resource* r = table_.Find(key);
  return r != nullptr && r->limit != 0 ? WrongKind(key, r) : Status::Ok();
}

std::string QuotedName(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out += '"';
  out += name;
  out += '"';
  return out;
}

Status LockManager::WrongKind(const LockKey& key, const Resource* r) {
  const std::string name = QuotedName(key.resource);
  if (r->limit == 0) {
    return Status(StatusCode::kWrongKind,
                  name +
                      " is an application lock in use; a name is a lock or a "
                      "semaphore, not both (ask /v1/applocks, or use "
                      "another name)");
  }
  return Status(StatusCode::kWrongKind,
                name + " is a semaphore of " + std::to_string(r->limit) +
                    " permits in use; a name is a lock or a semaphore, not "
                    "both (ask /v1/semaphores, or use another name)");
}

void LockManager::RefuseAtOnce(Time now, Session* s, Resource* r,
                               LockOwner owner, LockMode mode,
                               std::uint32_t permits, AcquireOutcome& out) {
  ++timeouts_;
  if (events_ != nullptr) {
    Event e = LockEvent(EventType::kLockTimeout, now, s, r, owner);
    e.mode = mode;
    if (permits != 0) e.count = permits;
    Emit(e);
  }
  table_.EraseIfIdle(r);
  out.result = AcquireResult::kTimeout;
}

Status LockManager::WaitPending(const Session* s) {
  return Status(StatusCode::kWaitPending,
                "session " + std::to_string(s->id) +
                    " is already waiting for a lock; one request at a "
                    "time per session (cancel it, or use another "
                    "session)");
}

// Whether `s` asking `owner`/`mode` on `r` may be granted now. A holder's
// request (re-acquisition or conversion) waits only on other sessions'
// granted modes; anyone else also queues behind every conflicting waiter.
LockManager::Decision LockManager::Decide(Resource* r, Session* s,
                                          LockOwner owner, LockMode mode) {
  Decision d;
  if (Quiet(r)) {  // nobody holds it: it waits behind the quiet period
    d.target = mode;
    d.conversion = false;
    return d;
  }
  const Grant* own = table_.FindGrant(r, s, owner);
  d.target = own != nullptr ? Combine(own->mode, mode) : mode;
  if (own != nullptr && d.target == own->mode) {
    d.conversion = true;
    d.grantable = true;  // nothing changes for others
    return d;
  }
  d.conversion = own != nullptr || table_.SessionHolds(r, s);
  if (HeldBack(r)) return d;  // a lock-delay: nothing until it ends
  const ModeMask granted =
      d.conversion ? table_.OthersGrantedMask(r, s) : r->GrantedMask();
  if (ConflictsWithAny(d.target, granted)) return d;
  if (!d.conversion) {
    for (const Waiter* w = r->queue_head; w != nullptr; w = w->next) {
      if (!Compatible(w->target, d.target)) return d;
    }
  }
  d.grantable = true;
  return d;
}

Grant* LockManager::GrantTo(Resource* r, Session* s, LockOwner owner,
                            LockMode mode, Time now, bool for_call,
                            Duration max_hold) {
  Grant* g = table_.FindGrant(r, s, owner);
  if (g == nullptr) {
    g = table_.AddGrant(r, s, owner, mode, fences_->Next(), now);
  } else {
    table_.SetGrantMode(g, Combine(g->mode, mode));
    ++g->count;
    g->fence = fences_->Next();
  }
  LimitHold(g, max_hold, now);
  if (!r->memory && !for_call) JournalGrant(g, JournalEntry::Kind::kPutLock);
  if (events_ != nullptr) {
    Event e = LockEvent(EventType::kLockGranted, now, s, r, owner);
    e.mode = g->mode;
    e.count = g->count;
    e.fence = g->fence;
    Emit(e);
  }
  return g;
}

void LockManager::Park(Time now, Session* s, Resource* r, LockOwner owner,
                       LockMode mode, std::uint32_t permits, const Decision& d,
                       WaitTerms& terms, AcquireOutcome& out) {
  if (terms.wait == 0) terms.wait = ++last_wait_id_;
  const WaitId id = terms.wait;
  Waiter* w = table_.Enqueue(r, s, owner, mode, d.target, d.conversion, now,
                             terms.deadline, id);
  w->for_call = terms.for_call;
  w->permits = permits;
  w->max_hold = terms.max_hold;
  waits_.emplace(id, w);
  if (terms.deadline) {
    deadlines_->Add({*terms.deadline, DeadlineKind::kWaitTimeout, id});
  }
  out.wait = id;
  // A decision on this request while its deadlocks are resolved is its
  // answer: Deliver writes it into `out` and clears out.wait.
  inline_wait_ = id;
  inline_out_ = &out;
  bool announced = false;
  while (s->waiting == w) {
    auto cycle = detector_.FindCycle(s);
    if (!cycle) break;
    Session* victim = ChooseVictim(*cycle, s);
    const DeadlockReport report = MakeReport(*cycle, victim);
    ++deadlocks_;
    if (victim != s && !announced) {
      Announce(w, now);
      announced = true;
    }
    AbortWait(victim->waiting, AcquireResult::kDeadlock, now, &report);
  }
  inline_wait_ = 0;
  inline_out_ = nullptr;
  if (out.wait && !announced) Announce(w, now);
}

void LockManager::Announce(const Waiter* w, Time now) {
  if (events_ == nullptr) return;
  Event e = LockEvent(EventType::kLockWaiting, now, w->session, w->resource,
                      w->owner);
  e.mode = w->requested;
  e.count = w->permits;
  e.until = w->deadline;
  Emit(e);
}

// --- Releases
// -----------------------------------------------------------------

Status LockManager::Release(Time now, Session* s, const LockKey& key,
                            LockOwner owner) {
  Resource* r = table_.Find(key);
  if (r != nullptr && r->limit != 0) return WrongKind(key, r);
  Grant* g = r != nullptr ? table_.FindGrant(r, s, owner) : nullptr;
  if (g == nullptr) {
    return Status(StatusCode::kNotHeld,
                  "session " + std::to_string(s->id) + " does not hold \"" +
                      std::string(key.resource) + "\" as owner " +
                      std::string(LockOwnerName(owner)));
  }
  if (s->waiting != nullptr && s->waiting->resource == r) {
    return Status(StatusCode::kWaitPending,
                  "session " + std::to_string(s->id) +
                      " is waiting to change its lock on this resource; "
                      "cancel the wait before releasing");
  }
  DropReference(g, now);
  return Status::Ok();
}

void LockManager::ReleaseIfHeld(Time now, Session* s, const LockKey& key,
                                LockOwner owner) {
  Resource* r = table_.Find(key);
  if (r != nullptr && r->limit != 0) return;  // not a lock of the call
  Grant* g = r != nullptr ? table_.FindGrant(r, s, owner) : nullptr;
  if (g != nullptr) DropReference(g, now);
}

void LockManager::DropReference(Grant* g, Time now) {
  Resource* r = g->resource;
  --g->count;
  if (!r->memory) {
    JournalGrant(g, g->count > 0 ? JournalEntry::Kind::kPutLock
                                 : JournalEntry::Kind::kDeleteLock);
  }
  if (events_ != nullptr) {
    Event e = LockEvent(EventType::kLockReleased, now, g->session, r, g->owner);
    e.mode = g->mode;
    e.count = g->count;
    e.fence = g->fence;
    Emit(e);
  }
  if (g->count > 0) return;
  RemoveGrant(g);
  GrantWaiters(r, now);
  table_.EraseIfIdle(r);
}

void LockManager::ReleaseAll(Time now, Session* s, LockOwner owner,
                             RowDeletes deletes) {
  std::vector<Resource*> touched;
  touched.reserve(s->grant_count[OwnerIndex(owner)]);
  while (Grant* g = s->grants[OwnerIndex(owner)]) {
    Resource* r = g->resource;
    if (!r->memory && deletes == RowDeletes::kEach) {
      JournalGrant(g, JournalEntry::Kind::kDeleteLock);
    }
    Event e = LockEvent(EventType::kLockReleased, now, s, r, owner);
    e.mode = g->mode;
    e.fence = g->fence;
    r->permits_held -= r->limit != 0 ? g->count : 0;
    RemoveGrant(g);
    Emit(e);
    touched.push_back(r);
  }
  for (Resource* r : touched) {
    GrantWaiters(r, now);
    table_.EraseIfIdle(r);
  }
}

void LockManager::EndTransaction(Time now, Session* s, RowDeletes deletes) {
  // A parked request that the transaction's end would leave meaningless
  // (Transaction-owned, or converting a lock the transaction holds) ends.
  if (Waiter* w = s->waiting) {
    if (w->owner == LockOwner::kTransaction ||
        table_.FindGrant(w->resource, s, LockOwner::kTransaction) != nullptr) {
      AbortWait(w, AcquireResult::kCancelled, now, nullptr);
    }
  }
  ReleaseAll(now, s, LockOwner::kTransaction, deletes);
}

// --- Durability
// ---------------------------------------------------------------

void LockManager::SetMemoryNamespace(std::string_view ns, bool memory) {
  if (memory) {
    memory_namespaces_.emplace(ns);
  } else if (auto it = memory_namespaces_.find(ns);
             it != memory_namespaces_.end()) {
    memory_namespaces_.erase(it);
  }
}

Status LockManager::Restore(Session* s, const LockKey& key,
                            const LockRow& row) {
  const auto refuse = [&](std::string_view why) {
    return Status(StatusCode::kBadRequest,
                  "the lock row of session " + std::to_string(s->id) +
                      " on \"" + std::string(key.resource) +
                      "\" cannot be restored: " + std::string(why));
  };
  if (row.lost != LostReason::kNone) return RestoreLoss(s, key, row);
  const auto mode = static_cast<int>(row.mode);
  const bool semaphore = row.limit != 0;
  if (semaphore ? mode != 0 : (mode <= 0 || mode >= kLockModeCount)) {
    return refuse(semaphore ? "a semaphore's row has a lock mode"
                            : "its mode is not a lock mode");
  }
  if (row.count == 0) return refuse("its count is 0");
  if (semaphore && row.limit > kMaxSemaphoreLimit) {
    return refuse("its limit is above " + std::to_string(kMaxSemaphoreLimit));
  }
  if (row.owner != LockOwner::kSession &&
      row.owner != LockOwner::kTransaction) {
    return refuse("its owner is neither Session nor Transaction");
  }
  Resource* r = table_.FindOrCreate(key);
  if (r->idle()) r->limit = row.limit;
  if (r->limit != row.limit) {
    table_.EraseIfIdle(r);
    return refuse(r->limit == 0 || !semaphore
                      ? "another row names it as the other kind (a lock "
                        "and a semaphore)"
                      : "another row gives the semaphore another limit");
  }
  if (table_.FindGrant(r, s, row.owner) != nullptr) {
    return refuse("the owner holds it already");
  }
  if (semaphore ? std::uint64_t{r->permits_held} + row.count > r->limit
                : ConflictsWithAny(row.mode, table_.OthersGrantedMask(r, s))) {
    table_.EraseIfIdle(r);
    return refuse(semaphore ? "the semaphore's rows hold more permits than its "
                              "limit"
                            : "another session's restored lock there conflicts "
                              "with its mode");
  }
  Grant* g = table_.AddGrant(r, s, row.owner, row.mode, row.fence, row.since);
  g->count = row.count;
  if (semaphore) r->permits_held += row.count;
  if (row.hold_until) SetHoldLimit(g, *row.hold_until);
  return Status::Ok();
}

void LockManager::QuietFor(Session* s) {
  if (s->memory_locks_lost) return;
  s->memory_locks_lost = true;
  ++owed_news_;
}

bool LockManager::EndQuietFor(Time now, Session* s) {
  if (!s->memory_locks_lost) return false;
  s->memory_locks_lost = false;
  if (--owed_news_ > 0) return true;
  std::vector<Resource*> waiting;
  table_.ForEachResource([&](const Resource* r) {
    if (r->memory && r->queue_head != nullptr) {
      waiting.push_back(const_cast<Resource*>(r));
    }
  });
  for (Resource* r : waiting) GrantWaiters(r, now);
  return true;
}

void LockManager::JournalHeld(Session* s, const LockKey& key, LockOwner owner) {
  Resource* r = table_.Find(key);
  if (r != nullptr && r->memory) return;
  const Grant* g = r != nullptr ? table_.FindGrant(r, s, owner) : nullptr;
  if (g != nullptr) return JournalGrant(g, JournalEntry::Kind::kPutLock);
  if (r == nullptr && IsMemoryNamespace(key.ns)) return;
  // Gone since the call took it (its session released it meanwhile): the
  // disk never had this call's row, and deleting none is harmless.
  JournalLockRow(JournalEntry::Kind::kDeleteLock, s->id, owner, key);
}

LockRow& LockManager::JournalLockRow(JournalEntry::Kind kind, SessionId session,
                                     LockOwner owner, const LockKey& key) {
  JournalEntry& e = journal_->emplace_back();
  e.kind = kind;
  LockRow& row = e.lock;
  row.session = session;
  row.owner = owner;
  row.ns = key.ns;
  row.principal = key.principal;
  row.resource = key.resource;
  return row;
}

void LockManager::JournalGrant(const Grant* g, JournalEntry::Kind kind) {
  const DecodedKey key = LockTable::DecodeKey(g->resource->key);
  LockRow& row = JournalLockRow(kind, g->session->id, g->owner,
                                {key.ns, key.principal, key.resource});
  if (kind == JournalEntry::Kind::kDeleteLock) return;
  row.mode = g->mode;
  row.count = g->count;
  row.limit = g->resource->limit;
  row.fence = g->fence;
  row.since = g->since;
  row.hold_until = HoldLimitOf(g);
}

// --- Questions
// ----------------------------------------------------------------

LockMode LockManager::Held(Session* s, const LockKey& key, LockOwner owner) {
  Resource* r = table_.Find(key);
  const Grant* g = r != nullptr ? table_.FindGrant(r, s, owner) : nullptr;
  return g != nullptr ? g->mode : LockMode::kNoLock;
}

bool LockManager::WouldGrant(Session* s, const LockKey& key, LockMode mode,
                             LockOwner owner) {
  Resource* r = table_.Find(key);
  if (r == nullptr) return owed_news_ == 0 || !IsMemoryNamespace(key.ns);
  if (r->limit != 0) return false;  // a semaphore in use
  return Decide(r, s, owner, mode).grantable;
}

std::optional<WaitId> LockManager::WaitOf(const Session* s) const {
  if (s->waiting == nullptr) return std::nullopt;
  return s->waiting->id;
}

// --- Ends of waits
// ------------------------------------------------------------

bool LockManager::Cancel(Time now, Session* s) {
  if (s->waiting == nullptr) return false;
  AbortWait(s->waiting, AcquireResult::kCancelled, now, nullptr);
  return true;
}

bool LockManager::CancelWait(Time now, WaitId wait) {
  auto it = waits_.find(wait);
  if (it == waits_.end()) return false;
  AbortWait(it->second, AcquireResult::kCancelled, now, nullptr);
  return true;
}

void LockManager::TimeOut(Time at, WaitId wait) {
  ++timeouts_;
  AbortWait(waits_.at(wait), AcquireResult::kTimeout, at, nullptr);
}

void LockManager::AbortWait(Waiter* w, AcquireResult result, Time now,
                            const DeadlockReport* report) {
  Session* s = w->session;
  Resource* r = w->resource;
  const WaitId id = w->id;
  const bool for_call = w->for_call;
  const LockOwner owner = w->owner;
  const LockMode requested = w->requested;
  Forget(w);
  if (events_ != nullptr) {
    Event e = LockEvent(
        result == AcquireResult::kTimeout     ? EventType::kLockTimeout
        : result == AcquireResult::kCancelled ? EventType::kLockCancelled
                                              : EventType::kLockDeadlock,
        now, s, r, owner);
    e.mode = requested;
    e.deadlock = report;
    Emit(e);
  }
  Deliver(id, for_call, s->id, result, nullptr, report);
  GrantWaiters(r, now);
  table_.EraseIfIdle(r);
}

void LockManager::Forget(Waiter* w) {
  if (w->deadline) {
    deadlines_->Remove({*w->deadline, DeadlineKind::kWaitTimeout, w->id});
  }
  waits_.erase(w->id);
  table_.Dequeue(w);
}

void LockManager::Deliver(WaitId wait, bool for_call, SessionId session,
                          AcquireResult result, const Grant* g,
                          const DeadlockReport* report) {
  const Fence fence = g != nullptr ? g->fence : 0;
  const LockMode held = g != nullptr ? g->mode : LockMode::kNoLock;
  const std::uint32_t count = g != nullptr ? g->count : 0;
  if (wait != inline_wait_ && !for_call) {  // the common case
    FinishedWait& done =
        finished_.emplace_back(wait, session, result, fence, held, count);
    if (report != nullptr) done.deadlock = *report;
    return;
  }
  AcquireOutcome* out = inline_out_;
  if (wait != inline_wait_) {
    CallStep& step = call_steps_.emplace_back();
    step.wait = wait;
    out = &step.outcome;
  }
  out->wait.reset();
  out->result = result;
  out->fence = fence;
  out->held = held;
  out->count = count;
  if (report != nullptr) out->deadlock = *report;
}

CallStep LockManager::TakeCallStep() {
  CallStep step = std::move(call_steps_.front());
  call_steps_.pop_front();
  return step;
}

void LockManager::GrantWaiters(Resource* r, Time now) {
  if (Quiet(r) || HeldBack(r)) return;
  if (r->limit != 0) return GrantPermitWaiters(r, now);
  ModeMask waiting_ahead = 0;
  Waiter* w = r->queue_head;
  while (w != nullptr) {
    Waiter* next = w->next;
    const ModeMask granted = w->conversion
                                 ? table_.OthersGrantedMask(r, w->session)
                                 : r->GrantedMask();
    const bool ok =
        !ConflictsWithAny(w->target, granted) &&
        (w->conversion || !ConflictsWithAny(w->target, waiting_ahead));
    if (ok) {
      GrantWaiter(w, now);
    } else {
      waiting_ahead |= ModeBit(w->target);
      // Nothing behind a waiting Exclusive can pass it.
      if ((waiting_ahead & ModeBit(LockMode::kExclusive)) && next != nullptr &&
          !next->conversion) {
        break;
      }
    }
    w = next;
  }
}

void LockManager::GrantWaiter(Waiter* w, Time now) {
  Session* s = w->session;
  Resource* r = w->resource;
  const LockOwner owner = w->owner;
  const LockMode requested = w->requested;
  const WaitId id = w->id;
  const bool for_call = w->for_call;
  const std::uint32_t permits = w->permits;
  const Duration max_hold = w->max_hold;
  Forget(w);
  const Grant* g =
      r->limit != 0 ? GrantPermits(r, s, owner, permits, now, max_hold)
                    : GrantTo(r, s, owner, requested, now, for_call, max_hold);
  Deliver(id, for_call, s->id, AcquireResult::kGrantedAfterWait, g, nullptr);
}

// --- Deadlocks
// ----------------------------------------------------------------

// Victim: the lowest deadlock priority; among equals, the session that
// closed the cycle, else the one that started waiting last.
Session* LockManager::ChooseVictim(const std::vector<CycleEdge>& cycle,
                                   Session* closer) {
  Session* victim = closer;
  for (const CycleEdge& e : cycle) {
    Session* s = e.waiter;
    if (s->deadlock_priority < victim->deadlock_priority) {
      victim = s;
    } else if (s->deadlock_priority == victim->deadlock_priority &&
               victim != closer && s->waiting->id > victim->waiting->id) {
      victim = s;
    }
  }
  return victim;
}

DeadlockReport LockManager::MakeReport(const std::vector<CycleEdge>& cycle,
                                       const Session* victim) {
  DeadlockReport report;
  report.victim = victim->id;
  for (const CycleEdge& e : cycle) {
    const auto key = LockTable::DecodeKey(e.resource->key);
    report.cycle.push_back(
        WaitForEdge{e.waiter->id, e.waiter->name, e.holder->id, e.holder->name,
                    std::string(key.ns), std::string(key.principal),
                    std::string(key.resource), e.wanted, e.permits});
  }
  return report;
}

// --- Listings
// -----------------------------------------------------------------

std::vector<LockInfo> LockManager::List(std::string_view ns) const {
  std::vector<LockInfo> out;
  table_.ForEachResource([&](const Resource* r) {
    if (r->limit != 0) return;  // a semaphore
    const auto key = LockTable::DecodeKey(r->key);
    if (!ns.empty() && key.ns != ns) return;
    out.push_back(Describe(r, key));
  });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.principal, a.resource) <
           std::tie(b.ns, b.principal, b.resource);
  });
  return out;
}

std::optional<LockInfo> LockManager::GetLock(const LockKey& key) {
  const Resource* r = table_.Find(key);
  if (r == nullptr || r->limit != 0) return std::nullopt;
  return Describe(r, LockTable::DecodeKey(r->key));
}

void LockManager::CountByNamespace(
    std::map<std::string, NamespaceInfo, std::less<>>& out) const {
  table_.ForEachResource([&](const Resource* r) {
    const std::string_view ns = LockTable::DecodeKey(r->key).ns;
    auto it = out.find(ns);
    if (it == out.end())
      it = out.emplace(std::string(ns), NamespaceInfo{}).first;
    ++(r->limit != 0 ? it->second.semaphores : it->second.lock_resources);
  });
}

LockInfo LockManager::Describe(const Resource* r, const DecodedKey& key) const {
  LockInfo info;
  if (r->held_back) {
    info.lock_delay_until = r->held_back_until;
  } else if (restart_hold_until_ && RestartHolds(r)) {
    info.lock_delay_until = restart_hold_until_;
  }
  info.ns = key.ns;
  info.principal = key.principal;
  info.resource = key.resource;
  for (const Grant* g = r->grants; g != nullptr; g = g->resource_next) {
    info.granted.push_back(GrantedLockInfo{g->session->id, g->session->name,
                                           g->owner, g->mode, g->count,
                                           g->since, g->fence, HoldLimitOf(g)});
  }
  // Oldest grant first reads better than the list's push-front order.
  std::reverse(info.granted.begin(), info.granted.end());
  for (const Waiter* w = r->queue_head; w != nullptr; w = w->next) {
    info.waiting.push_back(WaitingLockInfo{
        w->id, w->session->id, w->session->name, w->owner, w->requested,
        w->target, w->conversion, w->since, w->deadline});
  }
  return info;
}

Event LockManager::LockEvent(EventType type, Time now, const Session* s,
                             const Resource* r, LockOwner owner) const {
  Event e;
  e.type = r->limit != 0 ? SemaphoreEventType(type) : type;
  e.at = now;
  e.limit = r->limit;
  e.session = s->id;
  e.session_name = s->name;
  if (events_ == nullptr) return e;  // skip decoding when nobody listens
  const auto key = LockTable::DecodeKey(r->key);
  e.ns = key.ns;
  e.principal = key.principal;
  e.resource = key.resource;
  e.owner = owner;
  if (s->transaction != nullptr) e.transaction = s->transaction->id;
  return e;
}

}  // namespace leasehold::engine
