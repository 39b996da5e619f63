// LockGuard: a Session-owned application lock, released when destroyed.
#include "client/across_restarts.h"
#include "client/session_impl.h"

namespace leasehold::client {

class LockGuard::Impl {
 public:
  Impl(std::shared_ptr<Session::Impl> s, std::string n, std::string r,
       std::string p)
      : name(std::move(s), n, p, r),
        ns(std::move(n)),
        resource(std::move(r)),
        principal(std::move(p)) {}

  Session::Impl::Guarded name;
  std::string ns, resource, principal;
  std::uint64_t fence = 0;
  bool waited = false;

  bool held() const { return name.held(); }
  Result<void> Release() {
    if (auto refused = name.Let("lock " + resource)) {
      return std::unexpected(std::move(*refused));
    }
    return name.session->client.Release(ns, name.session->id, resource,
                                        "Session", principal);
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
  auto impl = std::make_unique<LockGuard::Impl>(
      impl_, std::move(ns), std::move(resource), options.principal);
  impl->fence = r->fence;
  impl->waited = r->result == 1;
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
