// SessionTable: open sessions by id, each with its kSessionExpiry deadline
// in the engine's DeadlineQueue. Internal to the engine; single-threaded.
#ifndef LEASEHOLD_ENGINE_SESSION_TABLE_H_
#define LEASEHOLD_ENGINE_SESSION_TABLE_H_

#include <memory>
#include <unordered_map>

#include "engine/deadline_queue.h"
#include "engine/session.h"

namespace leasehold::engine {

class SessionTable {
 public:
  // Ids start above `id_base`, so that ids from before a restart are not
  // handed out again when the base is chosen to exceed them.
  SessionTable(SessionId id_base, DeadlineQueue* deadlines)
      : deadlines_(deadlines), last_id_(id_base) {}

  Session* Find(SessionId id) const;
  // Opens a session expiring at now + ttl. Options must be validated.
  Session* Open(const SessionOptions& options, Time now);
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
  std::unordered_map<SessionId, std::unique_ptr<Session>> sessions_;
  DeadlineQueue* deadlines_;
  SessionId last_id_;
};

}  // namespace leasehold::engine

#endif  // LEASEHOLD_ENGINE_SESSION_TABLE_H_
