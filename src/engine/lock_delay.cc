// LockManager's lock-delay (NamespaceOptions::lock_delay): what a session
// held when it expired or was ended by an administrator is granted to
// nobody else until the delay has passed, because its holder may still be
// at work (a long pause, a lost network). Each hold has a kLockDelayEnd
// deadline; the latest end is journaled as a reservation, so a restart
// during a delay holds the namespace back until it would have ended.
#include "engine/lock_manager.h"

namespace leasehold::engine {

void LockManager::SetLockDelay(std::string_view ns, Duration delay) {
  if (delay > Duration::zero()) {
    lock_delays_.insert_or_assign(std::string(ns), delay);
  } else if (auto it = lock_delays_.find(ns); it != lock_delays_.end()) {
    lock_delays_.erase(it);
  }
}

Duration LockManager::LockDelayOf(std::string_view ns) const {
  if (lock_delays_.empty()) return Duration::zero();
  auto it = lock_delays_.find(ns);
  return it == lock_delays_.end() ? Duration::zero() : it->second;
}

bool LockManager::RestartHolds(const Resource* r) const {
  return LockDelayOf(LockTable::DecodeKey(r->key).ns) > Duration::zero();
}

void LockManager::HoldBackAll(Time now, Session* s) {
  if (lock_delays_.empty()) return;
  for (const Grant* g : s->grants) {
    for (; g != nullptr; g = g->session_next) HoldBack(g, now);
  }
}

void LockManager::HoldBack(const Grant* g, Time now) {
  Resource* r = g->resource;
  const Duration delay = LockDelayOf(LockTable::DecodeKey(r->key).ns);
  if (delay <= Duration::zero()) return;
  const Time until = now + delay;
  const std::uint64_t id = ++last_hold_id_;
  const std::uint32_t permits = r->limit != 0 ? g->count : 0;
  holds_.emplace(id, Hold{r, until, permits});
  if (r->limit != 0) {
    r->held_back_permits += permits;
  } else {
    r->held_back = true;
  }
  r->held_back_until = std::max(r->held_back_until, until);
  deadlines_->Add({until, DeadlineKind::kLockDelayEnd, id});
  if (until > journaled_hold_until_) {  // once per expiry, not per lock
    journaled_hold_until_ = until;
    JournalEntry& e = journal_->emplace_back();
    e.kind = JournalEntry::Kind::kReserveLockDelay;
    e.lock_delay_until_us =
        static_cast<std::uint64_t>(until.time_since_epoch().count());
  }
}

void LockManager::HoldBackAfterRestart(Time until) {
  restart_hold_until_ = until;
  journaled_hold_until_ = std::max(journaled_hold_until_, until);
  deadlines_->Add({until, DeadlineKind::kLockDelayEnd, 0});
}

void LockManager::EndHold(Time at, std::uint64_t hold) {
  if (hold == 0) {  // the restart's: every lock-delay namespace may grant
    restart_hold_until_.reset();
    std::vector<Resource*> waiting;
    table_.ForEachResource([&](const Resource* r) {
      if (r->queue_head != nullptr && RestartHolds(r)) {
        waiting.push_back(const_cast<Resource*>(r));
      }
    });
    for (Resource* r : waiting) GrantWaiters(r, at);
    return;
  }
  auto it = holds_.find(hold);
  if (it == holds_.end()) return;
  const Hold h = it->second;
  holds_.erase(it);
  Resource* r = h.resource;
  if (r->limit != 0) {
    r->held_back_permits -= h.permits;
  } else if (r->held_back_until <= at) {  // the latest hold of this lock
    r->held_back = false;
  }
  if (!r->held_back && r->held_back_permits == 0) r->held_back_until = Time{};
  GrantWaiters(r, at);
  table_.EraseIfIdle(r);
}

}  // namespace leasehold::engine
