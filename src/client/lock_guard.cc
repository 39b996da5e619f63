// LockGuard: a Session-owned application lock, released when destroyed.
#include <chrono>
#include <thread>

#include "client/session_impl.h"

namespace leasehold::client {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until the server answers /healthz again, or `until` passes.
bool AwaitServer(Client& client, Clock::time_point until) {
  while (true) {
    if (auto ok = client.Healthy(); ok && *ok) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The fence of the Session-owned lock `session` holds on `resource`, if the
// listing shows one.
std::optional<std::uint64_t> HeldFence(Client& client, const std::string& ns,
                                       const std::string& session,
                                       const std::string& resource,
                                       const std::string& principal) {
  auto locks = client.ListLocks(ns);
  if (!locks) return std::nullopt;
  for (const LockInfo& l : *locks) {
    if (l.resource != resource || l.principal != principal) continue;
    for (const LockHolder& h : l.granted) {
      if (h.session == session && h.owner == "Session") return h.fence;
    }
  }
  return std::nullopt;
}

}  // namespace

class LockGuard::Impl {
 public:
  std::shared_ptr<Session::Impl> session;
  std::string ns, resource, principal;
  std::uint64_t fence = 0;
  bool waited = false;
  bool released = false;

  bool held() const {
    return !released && !session->lost() && !session->ended();
  }
  Result<void> Release() {
    if (released) {
      return std::unexpected(Error{"not_held", "already released", 0});
    }
    released = true;
    session->GuardLet(Session::Impl::LockKey(ns, principal, resource));
    if (session->lost()) {
      return std::unexpected(Error{
          "lost", "session " + session->id + " was lost with its locks", 0});
    }
    return session->client.Release(ns, session->id, resource, "Session",
                                   principal);
  }
};

Result<LockGuard> Session::Lock(std::string ns, std::string resource,
                                AcquireOptions options) {
  options.owner = "Session";  // the guard, not a transaction, ends it
  std::string key = Session::Impl::LockKey(ns, options.principal, resource);
  auto r = AcquireAcrossRestarts(ns, resource, options, impl_->GuardHolds(key));
  if (!r) return std::unexpected(r.error());
  if (!r->granted()) {
    std::string message = "lock " + resource + " in " + ns +
                          " not granted: " + r->status + " (result " +
                          std::to_string(r->result) + ")";
    return std::unexpected(Error{r->status, std::move(message), 409});
  }
  auto impl = std::make_unique<LockGuard::Impl>();
  impl->session = impl_;
  impl->ns = std::move(ns);
  impl->resource = std::move(resource);
  impl->principal = options.principal;
  impl->fence = r->fence;
  impl->waited = r->result == 1;
  impl_->GuardTook(std::move(key));
  return LockGuard(std::move(impl));
}

// The session outlives a restart of the server, but a wait's connection
// does not: when it breaks, wait for the server, then ask whether the grant
// reached the disk before the break (the session holds the lock now) and
// adopt it, or ask again with what is left of the timeout. Only where no
// guard of this session held the lock already: otherwise a grant before
// the break could not be told from the earlier hold, and the break is
// reported as it is ("unreachable").
Result<AcquireOutcome> Session::AcquireAcrossRestarts(
    const std::string& ns, const std::string& resource, AcquireOptions options,
    bool guarded) {
  Client& client = impl_->client;
  const bool forever = options.timeout.count() < 0;
  const Clock::time_point deadline = Clock::now() + options.timeout;
  while (true) {
    auto r = client.Acquire(ns, impl_->id, resource, options);
    if (r || r.error().code != "unreachable" || guarded) return r;
    // However long the lock wait may be, a server gone for longer than the
    // I/O allowance is reported.
    const Clock::time_point give_up =
        std::max(forever ? Clock::now() : deadline, Clock::now()) +
        client.options().io_timeout;
    if (!AwaitServer(client, give_up)) return r;
    auto mode =
        client.Mode(ns, impl_->id, resource, "Session", options.principal);
    if (!mode) return std::unexpected(mode.error());  // e.g. the session
    if (*mode != "NoLock") {
      auto fence =
          HeldFence(client, ns, impl_->id, resource, options.principal);
      if (!fence) return r;
      AcquireOutcome granted;
      granted.result = 1;  // it had to wait for the restart, at least
      granted.status = "granted_after_wait";
      granted.fence = *fence;
      return granted;
    }
    if (!forever) {
      const auto left =
          std::chrono::duration_cast<Milliseconds>(deadline - Clock::now());
      options.timeout = std::max(left, Milliseconds(0));
    }
  }
}

LockGuard::LockGuard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LockGuard::LockGuard(LockGuard&&) noexcept = default;

LockGuard& LockGuard::operator=(LockGuard&& other) noexcept {
  if (this != &other) {
    if (impl_ && impl_->held()) (void)impl_->Release();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

LockGuard::~LockGuard() {
  if (impl_ && impl_->held()) (void)impl_->Release();
}

std::uint64_t LockGuard::fence() const { return impl_->fence; }
bool LockGuard::waited() const { return impl_->waited; }
bool LockGuard::held() const { return impl_ && impl_->held(); }
Result<void> LockGuard::Release() { return impl_->Release(); }

}  // namespace leasehold::client
