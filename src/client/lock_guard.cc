// LockGuard: a Session-owned application lock, released when destroyed.
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
  auto r = impl_->client.Acquire(ns, impl_->id, resource, options);
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
