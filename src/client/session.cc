// Session: a server session kept alive in the background.
#include <algorithm>

#include "client/client_impl.h"
#include "client/session_impl.h"

namespace leasehold::client {

Session::Impl::Impl(Client c, SessionInfo info,
                    std::function<void(const Error&)> on_lost,
                    std::function<void()> on_locks_lost,
                    std::function<void(const LostHold&)> on_hold_lost)
    : client(std::move(c)),
      id(std::move(info.id)),
      name(std::move(info.name)),
      ttl(info.ttl),
      on_lost_(std::move(on_lost)),
      on_locks_lost_(std::move(on_locks_lost)),
      on_hold_lost_(std::move(on_hold_lost)) {}

Session::Impl::~Impl() {
  if (ticker_) ticker_->Stop();
}

void Session::Impl::StartKeepalive() {
  // A third of the TTL leaves room for two failed keepalives in a row.
  const Milliseconds period = std::max(ttl / 3, Milliseconds(1));
  keepalive_wait_ = RenewalWait(period, client.options().io_timeout);
  ticker_ = std::make_unique<detail::Ticker>(
      period, [this] { return KeepaliveTick(); });
}

bool Session::Impl::KeepaliveTick() {
  auto r = client.KeepaliveWithin(id, keepalive_wait_);
  if (r && r->locks_lost && on_locks_lost_) on_locks_lost_();
  if (r) {
    for (const LostHold& h : r->lost) {
      // Guards are Session-owned; a Transaction-owned loss is the caller's.
      if (h.owner == "Session") {
        std::lock_guard lock(guards_mu_);
        ++losses_[LockKey(h.ns, h.principal, h.resource)];
      }
      if (on_hold_lost_) on_hold_lost_(h);
    }
  }
  if (r || r.error().code != "session_not_found") {
    return true;  // alive, or a transient failure: try again next period
  }
  lost_ = true;
  // The callback may destroy the Session (and this Impl): take it out first
  // and touch nothing of `this` afterwards.
  auto on_lost = std::move(on_lost_);
  if (on_lost) on_lost(r.error());
  return false;
}

Result<void> Session::Impl::End() {
  if (ticker_) ticker_->Stop();
  if (ended_.exchange(true)) return {};
  if (lost_) {
    return std::unexpected(
        Error{"lost", "session " + id + " was already gone", 0});
  }
  return client.EndSession(id);
}

Result<Session> Client::StartSession(
    std::string_view name, Milliseconds ttl,
    std::function<void(const Error&)> on_lost,
    std::function<void()> on_locks_lost,
    std::function<void(const LostHold&)> on_hold_lost) {
  auto info = OpenSession(name, ttl);
  if (!info) return std::unexpected(info.error());
  auto impl = std::make_shared<Session::Impl>(
      *this, std::move(*info), std::move(on_lost), std::move(on_locks_lost),
      std::move(on_hold_lost));
  impl->StartKeepalive();
  return Session(std::move(impl));
}

Session::Session(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;

Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    if (impl_) (void)impl_->End();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Session::~Session() {
  if (impl_) (void)impl_->End();
}

const std::string& Session::id() const { return impl_->id; }
const std::string& Session::name() const { return impl_->name; }
bool Session::lost() const { return impl_->lost(); }

Result<void> Session::End() { return impl_->End(); }

}  // namespace leasehold::client
