// LockManager's semaphores: a resource whose holders share at most `limit`
// permits (engine_types.h, "Semaphores"). Everything that is not
// about permits (parking, timeouts, cancellation, deadlocks, victims, the
// journal, sessions ending) is the locks' code in lock_manager.cc.
#include <algorithm>
#include <string>
#include <tuple>

#include "engine/lock_manager.h"

namespace leasehold::engine {
namespace {

// Permits the session holds on `r`, as either owner.
std::uint64_t SessionPermits(const Resource* r, const Session* s) {
  std::uint64_t held = 0;
  for (const Grant* g = r->grants; g != nullptr; g = g->resource_next) {
    if (g->session == s) held += g->count;
  }
  return held;
}

}  // namespace

Result<AcquireOutcome> LockManager::AcquirePermits(
    Time now, Session* s, const LockKey& key, std::uint32_t permits,
    std::uint32_t limit, LockOwner owner, WaitTerms& terms) {
  Resource* r = table_.FindOrCreate(key);
  if (r->idle()) {  // new: the first request sets the limit
    r->memory = IsMemoryNamespace(key.ns);
    r->limit = limit;
  } else if (r->limit == 0) {
    return std::unexpected(WrongKind(key, r));
  } else if (r->limit != limit) {
    return Error(StatusCode::kLimitMismatch,
                 "semaphore " + QuotedName(key.resource) +
                     " is in use with limit " + std::to_string(r->limit) +
                     ", not " + std::to_string(limit) +
                     "; every request must give the same limit while it is "
                     "held or awaited");
  }
  if (const std::uint64_t held = SessionPermits(r, s);
      held + permits > r->limit) {
    return Error(StatusCode::kBadRequest,
                 "session " + std::to_string(s->id) + " holds " +
                     std::to_string(held) + " of the " +
                     std::to_string(r->limit) + " permits of " +
                     QuotedName(key.resource) + "; " + std::to_string(permits) +
                     " more could never be granted");
  }
  const Decision d = DecidePermits(r, s, permits);
  AcquireOutcome out;
  if (d.grantable) {
    const Grant* g = GrantPermits(r, s, owner, permits, now, terms.max_hold);
    out.fence = g->fence;
    out.count = g->count;
    return out;
  }
  if (!terms.may_wait || (terms.deadline && *terms.deadline <= now)) {
    RefuseAtOnce(now, s, r, owner, LockMode::kNoLock, permits, out);
    return out;
  }
  Park(now, s, r, owner, LockMode::kNoLock, permits, d, terms, out);
  return out;
}

// A holder asking for more is a conversion: it queues after the earlier
// conversions, ahead of new requests, and is granted when its permits fit
// and no conversion waits before it. A new request needs an empty queue.
LockManager::Decision LockManager::DecidePermits(Resource* r, Session* s,
                                                 std::uint32_t permits) {
  Decision d;
  d.conversion = !Quiet(r) && table_.SessionHolds(r, s);
  if (Quiet(r) || HeldBack(r)) return d;
  const bool fits =
      std::uint64_t{r->permits_held} + r->held_back_permits + permits <=
      r->limit;
  const Waiter* head = r->queue_head;
  d.grantable =
      fits && (head == nullptr || (d.conversion && !head->conversion));
  return d;
}

Grant* LockManager::GrantPermits(Resource* r, Session* s, LockOwner owner,
                                 std::uint32_t permits, Time now,
                                 Duration max_hold) {
  Grant* g = table_.FindGrant(r, s, owner);
  if (g == nullptr) {
    g = table_.AddGrant(r, s, owner, LockMode::kNoLock, fences_->Next(), now);
    g->count = permits;
  } else {
    g->count += permits;
    g->fence = fences_->Next();
  }
  r->permits_held += permits;
  LimitHold(g, max_hold, now);
  if (!r->memory) JournalGrant(g, JournalEntry::Kind::kPutLock);
  if (events_ != nullptr) {
    Event e = LockEvent(EventType::kLockGranted, now, s, r, owner);
    e.count = g->count;
    e.fence = g->fence;
    Emit(e);
  }
  return g;
}

void LockManager::GrantPermitWaiters(Resource* r, Time now) {
  // Strictly FIFO: a request that does not fit yet holds back everyone
  // behind it, so many small requests cannot starve one large one.
  while (Waiter* w = r->queue_head) {
    if (std::uint64_t{r->permits_held} + r->held_back_permits + w->permits >
        r->limit) {
      return;
    }
    GrantWaiter(w, now);
  }
}

Result<std::uint32_t> LockManager::ReleasePermits(Time now, Session* s,
                                                  const LockKey& key,
                                                  LockOwner owner,
                                                  std::uint32_t permits) {
  Resource* r = table_.Find(key);
  if (r != nullptr && r->limit == 0) return std::unexpected(WrongKind(key, r));
  Grant* g = r != nullptr ? table_.FindGrant(r, s, owner) : nullptr;
  if (g == nullptr) {
    return Error(StatusCode::kNotHeld, "session " + std::to_string(s->id) +
                                           " holds no permits of semaphore " +
                                           QuotedName(key.resource) +
                                           " as owner " +
                                           std::string(LockOwnerName(owner)));
  }
  if (permits > g->count) {
    return Error(StatusCode::kBadRequest,
                 "session " + std::to_string(s->id) + " holds " +
                     std::to_string(g->count) + " permits of " +
                     QuotedName(key.resource) + " as owner " +
                     std::string(LockOwnerName(owner)) + ", fewer than the " +
                     std::to_string(permits) + " to release");
  }
  if (s->waiting != nullptr && s->waiting->resource == r) {
    return Error(StatusCode::kWaitPending,
                 "session " + std::to_string(s->id) +
                     " is waiting for more permits of this semaphore; cancel "
                     "the wait before releasing");
  }
  const std::uint32_t dropped = permits == 0 ? g->count : permits;
  g->count -= dropped;
  r->permits_held -= dropped;
  if (!r->memory) {
    JournalGrant(g, g->count > 0 ? JournalEntry::Kind::kPutLock
                                 : JournalEntry::Kind::kDeleteLock);
  }
  if (events_ != nullptr) {
    Event e = LockEvent(EventType::kLockReleased, now, s, r, owner);
    e.count = g->count;
    e.fence = g->fence;
    Emit(e);
  }
  const std::uint32_t left = g->count;
  if (left == 0) RemoveGrant(g);
  GrantWaiters(r, now);
  table_.EraseIfIdle(r);
  return left;
}

std::vector<SemaphoreInfo> LockManager::ListSemaphores(
    std::string_view ns) const {
  std::vector<SemaphoreInfo> out;
  table_.ForEachResource([&](const Resource* r) {
    if (r->limit == 0) return;
    const auto key = LockTable::DecodeKey(r->key);
    if (!ns.empty() && key.ns != ns) return;
    out.push_back(DescribeSemaphore(r, key));
  });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.ns, a.principal, a.name) <
           std::tie(b.ns, b.principal, b.name);
  });
  return out;
}

std::optional<SemaphoreInfo> LockManager::GetSemaphore(const LockKey& key) {
  const Resource* r = table_.Find(key);
  if (r == nullptr || r->limit == 0) return std::nullopt;
  return DescribeSemaphore(r, LockTable::DecodeKey(r->key));
}

SemaphoreInfo LockManager::DescribeSemaphore(const Resource* r,
                                             const DecodedKey& key) const {
  SemaphoreInfo info;
  if (restart_hold_until_ && RestartHolds(r)) {
    info.lock_delay_until = restart_hold_until_;
    info.lock_delay_permits = r->limit;
  } else if (r->held_back_permits != 0) {
    info.lock_delay_until = r->held_back_until;
    info.lock_delay_permits = r->held_back_permits;
  }
  info.ns = key.ns;
  info.principal = key.principal;
  info.name = key.resource;
  info.limit = r->limit;
  info.held = r->permits_held;
  for (const Grant* g = r->grants; g != nullptr; g = g->resource_next) {
    info.holders.push_back(SemaphoreHolderInfo{g->session->id, g->session->name,
                                               g->owner, g->count, g->since,
                                               g->fence, HoldLimitOf(g)});
  }
  std::reverse(info.holders.begin(), info.holders.end());  // oldest first
  for (const Waiter* w = r->queue_head; w != nullptr; w = w->next) {
    info.waiting.push_back(
        SemaphoreWaiterInfo{w->id, w->session->id, w->session->name, w->owner,
                            w->permits, w->conversion, w->since, w->deadline});
  }
  return info;
}

}  // namespace leasehold::engine
