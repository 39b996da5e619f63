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
  s->id = ids_.Next();
  s->name = options.name;
  s->ttl = options.ttl;
  s->deadlock_priority = options.deadlock_priority;
  s->caller = options.caller;
  s->opened_at = now;
  return Add(std::move(s), now);
}

Session* SessionTable::Restore(const SessionRow& row, Time now) {
  auto s = std::make_unique<Session>();
  s->id = row.id;
  s->name = row.name;
  s->ttl = row.ttl;
  s->deadlock_priority = row.deadlock_priority;
  s->caller = row.caller;
  s->opened_at = row.opened_at;
  ids_.Restore(row.id);
  return Add(std::move(s), now);
}

Session* SessionTable::Add(std::unique_ptr<Session> s, Time now) {
  s->expires_at = now + s->ttl;
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
