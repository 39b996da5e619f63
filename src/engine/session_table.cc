#include "engine/session_table.h"

namespace leasehold::engine {
namespace {

Deadline ExpiryOf(const Session& s) {
  return {s.expires_at, DeadlineKind::kSessionExpiry, s.id};
}

}  // namespace

Session* SessionTable::Find(SessionId id) const {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

Session* SessionTable::Open(const SessionOptions& options, Time now) {
  auto s = std::make_unique<Session>();
  s->id = ++last_id_;
  s->name = options.name;
  s->ttl = options.ttl;
  s->deadlock_priority = options.deadlock_priority;
  s->caller = options.caller;
  s->opened_at = now;
  s->expires_at = now + options.ttl;
  deadlines_->Add(ExpiryOf(*s));
  Session* raw = s.get();
  sessions_.emplace(raw->id, std::move(s));
  return raw;
}

void SessionTable::KeepAlive(Session* s, Time now) {
  deadlines_->Remove(ExpiryOf(*s));
  s->expires_at = now + s->ttl;
  deadlines_->Add(ExpiryOf(*s));
}

void SessionTable::Erase(Session* s) {
  deadlines_->Remove(ExpiryOf(*s));
  sessions_.erase(s->id);
}

}  // namespace leasehold::engine
