// Session::Impl: a server session and the thread that keeps it alive; shared
// with the LockGuards and SemaphoreGuards taken through it, which need to
// know if it was lost.
#ifndef LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_
#define LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "client/ticker.h"
#include "leasehold/client.h"

namespace leasehold::client {

class Session::Impl {
 public:
  Impl(Client client, SessionInfo info,
       std::function<void(const Error&)> on_lost,
       std::function<void()> on_locks_lost);
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

  Client client;
  const std::string id;
  const std::string name;
  const Milliseconds ttl;

 private:
  bool KeepaliveTick();

  std::function<void(const Error&)> on_lost_;
  std::function<void()> on_locks_lost_;
  Milliseconds keepalive_wait_{0};  // set before the ticker starts
  std::atomic<bool> lost_{false};
  std::atomic<bool> ended_{false};
  mutable std::mutex guards_mu_;
  std::multiset<std::string> guarded_;
  std::unique_ptr<detail::Ticker> ticker_;
};

}  // namespace leasehold::client

#endif  // LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_
