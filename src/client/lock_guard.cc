// LockGuard: a Session-owned application lock, released when destroyed.
#include "client/across_restarts.h"
#include "client/session_impl.h"

namespace leasehold::client {

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
  Client& client = impl_->client;
  const auto send_once =
      detail::WithTimeout(options, [&](const AcquireOptions& asked) {
        return client.AcquireOnce(ns, impl_->id, resource, asked);
      });
  // Where no guard of this session holds the lock, the session holds none
  // of it (its locks there are taken through guards only): a break can be
  // read without asking first. Else a grant before the break could not be
  // told from the earlier hold, and the break is reported as it is.
  Result<AcquireOutcome> r = std::unexpected(Error{});
  if (impl_->GuardHolds(key)) {
    r = send_once(options.timeout);
  } else {
    detail::SessionLockRequest request;
    request.ns = ns;
    request.session = impl_->id;
    request.principal = options.principal;
    request.locks.push_back(LockSpec{resource, options.mode});
    r = detail::SendAcrossRestarts<AcquireOutcome>(client, request,
                                                   options.timeout, send_once);
  }
  if (!r) return std::unexpected(r.error());
  if (!r->granted()) {
    std::string message = "lock " + resource + " in " + ns +
                          " not granted: " + r->status + " (result " +
                          std::to_string(r->result) + ")";
    return std::unexpected(
        Error{r->status, std::move(message), 409, std::move(r->deadlock)});
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
