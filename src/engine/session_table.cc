#include "engine/session_table.h"

namespace leasehold::engine {

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
  expiries_.emplace(s->expires_at, s->id);
  Session* raw = s.get();
  sessions_.emplace(raw->id, std::move(s));
  return raw;
}

void SessionTable::KeepAlive(Session* s, Time now) {
  expiries_.erase({s->expires_at, s->id});
  s->expires_at = now + s->ttl;
  expiries_.emplace(s->expires_at, s->id);
}

void SessionTable::Erase(Session* s) {
  expiries_.erase({s->expires_at, s->id});
  sessions_.erase(s->id);
}

Session* SessionTable::EarliestExpiry() const {
  if (expiries_.empty()) return nullptr;
  return Find(expiries_.begin()->second);
}

}  // namespace leasehold::engine
