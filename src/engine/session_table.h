// SessionTable: open sessions by id, each with its kSessionExpiry deadline
// in the engine's DeadlineQueue. Internal to the engine; single-threaded.
#ifndef LEASEHOLD_ENGINE_SESSION_TABLE_H_
#define LEASEHOLD_ENGINE_SESSION_TABLE_H_

#include <memory>
#include <unordered_map>

#include "engine/deadline_queue.h"
#include "engine/reserved_ids.h"
#include "engine/session.h"

namespace leasehold::engine {

class SessionTable {
 public:
  // Ids start above `id_base` and above every restored reservation; their
  // reservations are journaled to `journal`.
  SessionTable(SessionId id_base, JournalBatch* journal,
               DeadlineQueue* deadlines)
      : deadlines_(deadlines), ids_(id_base, journal) {}

  Session* Find(SessionId id) const;
  // Opens a session expiring at now + ttl. Options must be validated.
  Session* Open(const SessionOptions& options, Time now);
  // Brings back a session a previous run opened (the row must be
  // validated, its id unused), expiring at now + ttl: a fresh ttl.
  Session* Restore(const SessionRow& row, Time now);
  // Ids continue above `reserved`.
  void RestoreIds(SessionId reserved) { ids_.Restore(reserved); }
  // Moves expiry to now + ttl.
  void KeepAlive(Session* s, Time now);
  // Forgets `s`; it must hold and wait for nothing.
  void Erase(Session* s);

  std::size_t size() const { return sessions_.size(); }
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [id, s] : sessions_) f(s.get());
  }

 private:
  // Keeps `s`, expiring at now + its ttl.
  Session* Add(std::unique_ptr<Session> s, Time now);

  std::unordered_map<SessionId, std::unique_ptr<Session>> sessions_;
  DeadlineQueue* deadlines_;
  SessionIdSource ids_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_SESSION_TABLE_H_
