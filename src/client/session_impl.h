// Session::Impl: a server session and the thread that keeps it alive; shared
// with the LockGuards taken through it, which need to know if it was lost.
#ifndef LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_
#define LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_

#include <atomic>
#include <functional>
#include <memory>
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

  Client client;
  const std::string id;
  const std::string name;
  const Milliseconds ttl;

 private:
  bool KeepaliveTick();

  std::function<void(const Error&)> on_lost_;
  std::function<void()> on_locks_lost_;
  std::atomic<bool> lost_{false};
  std::atomic<bool> ended_{false};
  std::unique_ptr<detail::Ticker> ticker_;
};

}  // namespace leasehold::client

#endif  // LEASEHOLD_SRC_CLIENT_SESSION_IMPL_H_
