// LockManager's hold limits and breaks (engine_types.h, "Hold limits"): a
// grant the server takes back from a session that has not given it back,
// while the session lives on: at the limit it was granted with, or when an
// administrator breaks it. The session is told at its next keep-alive;
// until then the news is a lock row of its own (LockRow::lost), so that a
// restart in between does not lose it.
#include <string>

#include "engine/lock_manager.h"

namespace leasehold::engine {

void LockManager::SetMaxHold(std::string_view ns, Duration limit) {
  if (limit > Duration::zero()) {
    max_holds_.insert_or_assign(std::string(ns), limit);
  } else if (auto it = max_holds_.find(ns); it != max_holds_.end()) {
    max_holds_.erase(it);
  }
}

Result<Duration> LockManager::HoldLimitFor(std::string_view ns,
                                           Duration asked) const {
  const auto ms = [](Duration d) {
    return std::to_string(
        std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  if (asked < Duration::zero() || asked > kLongestTtl) {
    return Error(StatusCode::kBadRequest,
                 "max_hold_ms must be 0 (the namespace's limit) to " +
                     ms(kLongestTtl) + "; got " + ms(asked));
  }
  Duration limit = Duration::zero();
  if (auto it = max_holds_.find(ns); it != max_holds_.end()) {
    limit = it->second;
  }
  if (asked == Duration::zero()) return limit;
  if (limit > Duration::zero() && asked > limit) {
    return Error(StatusCode::kBadRequest,
                 "max_hold_ms " + ms(asked) + " is longer than namespace " +
                     QuotedName(ns) + " allows (" + ms(limit) +
                     "); ask for at most that, or leave it out");
  }
  return asked;
}

void LockManager::LimitHold(Grant* g, Duration max_hold, Time now) {
  if (max_hold <= Duration::zero()) return;
  const Time until = now + max_hold;
  if (g->hold_limit != 0 && g->hold_until <= until) return;
  SetHoldLimit(g, until);
}

void LockManager::SetHoldLimit(Grant* g, Time until) {
  if (g->hold_limit != 0) {
    deadlines_->Remove(
        {g->hold_until, DeadlineKind::kHoldLimit, g->hold_limit});
    hold_limits_.erase(g->hold_limit);
  }
  g->hold_limit = ++last_hold_limit_;
  g->hold_until = until;
  hold_limits_.emplace(g->hold_limit, g);
  deadlines_->Add({until, DeadlineKind::kHoldLimit, g->hold_limit});
}

void LockManager::RemoveGrant(Grant* g) {
  if (g->hold_limit != 0) {
    deadlines_->Remove(
        {g->hold_until, DeadlineKind::kHoldLimit, g->hold_limit});
    hold_limits_.erase(g->hold_limit);
  }
  table_.RemoveGrant(g);
}

void LockManager::ExpireHold(Time at, std::uint64_t limit) {
  auto it = hold_limits_.find(limit);
  if (it == hold_limits_.end()) return;
  ++holds_expired_;
  TakeBack(it->second, at, LostReason::kHoldLimit);
}

Result<std::vector<BrokenHold>> LockManager::Break(Time now, Session* s,
                                                   const LockKey& key,
                                                   bool semaphore) {
  Resource* r = table_.Find(key);
  if (r != nullptr && (r->limit != 0) != semaphore) {
    return std::unexpected(WrongKind(key, r));
  }
  std::vector<Grant*> taken;
  if (r != nullptr) {
    for (const LockOwner owner :
         {LockOwner::kSession, LockOwner::kTransaction}) {
      if (Grant* g = table_.FindGrant(r, s, owner)) taken.push_back(g);
    }
  }
  if (taken.empty()) {
    return Error(StatusCode::kNotHeld,
                 "session " + std::to_string(s->id) + " holds nothing on " +
                     QuotedName(key.resource) + "; nothing to break");
  }
  std::vector<BrokenHold> out;
  for (Grant* g : taken) {
    out.push_back(BrokenHold{g->owner, g->mode, g->count, g->fence});
    ++holds_broken_;
    TakeBack(g, now, LostReason::kBroken);
  }
  return out;
}

void LockManager::TakeBack(Grant* g, Time now, LostReason reason) {
  Session* s = g->session;
  Resource* r = g->resource;
  // Its request for more of this name would convert what it no longer has.
  if (s->waiting != nullptr && s->waiting->resource == r) {
    AbortWait(s->waiting, AcquireResult::kCancelled, now, nullptr);
  }
  HoldBack(g, now);  // its holder may still be at work, as for an expiry
  const DecodedKey key = LockTable::DecodeKey(r->key);
  s->lost.push_back(Session::Loss{
      LostHold{std::string(key.ns), std::string(key.principal),
               std::string(key.resource), g->owner, r->limit != 0, reason, now},
      !r->memory});
  if (!r->memory) {
    LockRow& row = JournalLockRow(JournalEntry::Kind::kPutLock, s->id, g->owner,
                                  {key.ns, key.principal, key.resource});
    row.limit = r->limit;
    row.since = now;
    row.lost = reason;
  }
  if (events_ != nullptr) {
    Event e =
        LockEvent(reason == LostReason::kHoldLimit ? EventType::kLockExpired
                                                   : EventType::kLockBroken,
                  now, s, r, g->owner);
    e.mode = g->mode;
    e.count = g->count;
    e.fence = g->fence;
    Emit(e);
  }
  if (r->limit != 0) r->permits_held -= g->count;
  RemoveGrant(g);
  GrantWaiters(r, now);
  table_.EraseIfIdle(r);
}

std::vector<LostHold> LockManager::TakeLost(Session* s) {
  std::vector<LostHold> out;
  out.reserve(s->lost.size());
  for (Session::Loss& loss : s->lost) {
    const LostHold& h = loss.hold;
    const LockKey key{h.ns, h.principal, h.resource};
    Resource* r = loss.journaled ? table_.Find(key) : nullptr;
    // Taken again since: the grant's own row replaced the news.
    const bool held_again =
        r != nullptr && table_.FindGrant(r, s, h.owner) != nullptr;
    if (loss.journaled && !held_again) {
      JournalLockRow(JournalEntry::Kind::kDeleteLock, s->id, h.owner, key);
    }
    out.push_back(std::move(loss.hold));
  }
  s->lost.clear();
  return out;
}

Status LockManager::RestoreLoss(Session* s, const LockKey& key,
                                const LockRow& row) {
  if (row.lost != LostReason::kHoldLimit && row.lost != LostReason::kBroken) {
    return Status(StatusCode::kBadRequest,
                  "the lock row of session " + std::to_string(s->id) + " on " +
                      QuotedName(key.resource) +
                      " cannot be restored: its loss reason is unknown");
  }
  if (row.owner != LockOwner::kSession &&
      row.owner != LockOwner::kTransaction) {
    return Status(StatusCode::kBadRequest,
                  "the lock row of session " + std::to_string(s->id) + " on " +
                      QuotedName(key.resource) +
                      " cannot be restored: its owner is neither Session nor "
                      "Transaction");
  }
  s->lost.push_back(
      Session::Loss{LostHold{std::string(key.ns), std::string(key.principal),
                             std::string(key.resource), row.owner,
                             row.limit != 0, row.lost, row.since},
                    true});
  return Status::Ok();
}

}  // namespace leasehold::engine
