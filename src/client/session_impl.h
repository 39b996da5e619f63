// Session::Impl: a server session and the thread that keeps it alive; shared
// with the LockGuards and SemaphoreGuards taken through it, which need to
// know if it was lost.
#ifndef LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_
#define LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "client/ticker.h"
#include "leasehold/client.h"

namespace leasehold::client {

class Session::Impl {
 public:
  Impl(Client client, SessionInfo info,
       std::function<void(const Error&)> on_lost,
       std::function<void()> on_locks_lost,
       std::function<void(const LostHold&)> on_hold_lost);
  ~Impl();  // stops the keepalives; ending is Session's job

  void StartKeepalive();
  // Stops the keepalives and deletes the session (once).
  Result<void> End();

  bool lost() const { return lost_; }
  bool ended() const { return ended_; }

  // The locks (and semaphores) its guards hold, by (ns, principal, name): a
  // broken wait may be retried only where no guard holds it already (else a
  // grant before the break could not be told from the old hold).
  static std::string LockKey(std::string_view ns, std::string_view principal,
                             std::string_view resource) {
    std::string key(ns);
    key.append(1, '\0').append(principal).append(1, '\0').append(resource);
    return key;
  }
  bool GuardHolds(const std::string& key) const {
    std::lock_guard lock(guards_mu_);
    return guarded_.contains(key);
  }
  void GuardTook(std::string key) {
    std::lock_guard lock(guards_mu_);
    guarded_.insert(std::move(key));
  }
  void GuardLet(const std::string& key) {
    std::lock_guard lock(guards_mu_);
    if (auto it = guarded_.find(key); it != guarded_.end()) guarded_.erase(it);
  }
  // How many times the server took `key` back from this session (a hold
  // limit, a break): a guard taken at one count is lost once it rises.
  std::uint64_t Losses(const std::string& key) const {
    std::lock_guard lock(guards_mu_);
    auto it = losses_.find(key);
    return it == losses_.end() ? 0 : it->second;
  }

  // What a LockGuard and a SemaphoreGuard share: a name held through a
  // session (its lock, or its permits), and whether it still is.
  struct Guarded;

  Client client;
  const std::string id;
  const std::string name;
  const Milliseconds ttl;

 private:
  bool KeepaliveTick();

  std::function<void(const Error&)> on_lost_;
  std::function<void()> on_locks_lost_;
  std::function<void(const LostHold&)> on_hold_lost_;
  Milliseconds keepalive_wait_{0};  // set before the ticker starts
  std::atomic<bool> lost_{false};
  std::atomic<bool> ended_{false};
  mutable std::mutex guards_mu_;
  std::multiset<std::string> guarded_;
  std::map<std::string, std::uint64_t> losses_;
  std::unique_ptr<detail::Ticker> ticker_;
};

struct Session::Impl::Guarded {
  Guarded(std::shared_ptr<Session::Impl> s, std::string ns,
          std::string principal, std::string name)
      : session(std::move(s)),
        key(Session::Impl::LockKey(ns, principal, name)),
        losses(session->Losses(key)) {
    session->GuardTook(key);
  }

  // The server took it back since it was granted (a hold limit, a break).
  bool taken_back() const { return session->Losses(key) != losses; }
  bool held() const {
    return !released && !session->lost() && !session->ended() && !taken_back();
  }
  // Marks it released. The Error when no release is to be sent: released
  // already, lost with the session, or taken back (a release then could
  // drop a reference the session took again since). `what` names it.
  std::optional<Error> Let(const std::string& what) {
    if (released) return Error{"not_held", "already released", 0};
    released = true;
    session->GuardLet(key);
    if (session->lost()) {
      return Error{"lost", "session " + session->id + " was lost with " + what,
                   0};
    }
    if (taken_back()) {
      return Error{"lost", what + " was taken back by the server", 0};
    }
    return std::nullopt;
  }

  std::shared_ptr<Session::Impl> session;
  const std::string key;
  const std::uint64_t losses;  // the session's losses of it at the grant
  bool released = false;
};

}  // namespace leasehold::client

#endif  // LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_
