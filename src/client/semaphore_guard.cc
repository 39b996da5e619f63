// SemaphoreGuard: Session-owned permits of a semaphore, given back when
// destroyed.
#include "client/across_restarts.h"
#include "client/session_impl.h"

namespace leasehold::client {

class SemaphoreGuard::Impl {
 public:
  Impl(std::shared_ptr<Session::Impl> s, std::string n, std::string m,
       std::string p)
      : guarded(std::move(s), n, p, m),
        ns(std::move(n)),
        name(std::move(m)),
        principal(std::move(p)) {}

  Session::Impl::Guarded guarded;
  std::string ns, name, principal;
  std::uint64_t fence = 0;
  std::int64_t permits = 0;
  bool waited = false;

  bool held() const { return guarded.held(); }
  Result<void> Release() {
    if (auto refused = guarded.Let("permits of " + name)) {
      return std::unexpected(std::move(*refused));
    }
    auto left = guarded.session->client.ReleaseSemaphore(
        ns, guarded.session->id, name, "Session", permits, principal);
    if (!left) return std::unexpected(left.error());
    return {};
  }
};

Result<SemaphoreGuard> Session::Permits(std::string ns, std::string name,
                                        SemaphoreOptions options) {
  options.owner = "Session";  // the guard, not a transaction, ends it
  // A name is a lock or a semaphore, never both: one bookkeeping for both.
  std::string key = Session::Impl::LockKey(ns, options.principal, name);
  Client& client = impl_->client;
  const auto send_once =
      detail::WithTimeout(options, [&](const SemaphoreOptions& asked) {
        return client.AcquireSemaphoreOnce(ns, impl_->id, name, asked);
      });
  // As Lock: where no guard of this session holds permits, the session holds
  // none (they are taken through guards only), so a break can be read.
  Result<SemaphoreOutcome> r = std::unexpected(Error{});
  if (impl_->GuardHolds(key)) {
    r = send_once(options.timeout);
  } else {
    r = detail::SendAcrossRestarts(
        client, {ns, impl_->id, options.principal, name, options.permits},
        options.timeout, send_once);
  }
  if (!r) return std::unexpected(r.error());
  if (!r->granted()) {
    std::string message = std::to_string(options.permits) + " permits of " +
                          name + " in " + ns + " not granted: " + r->status +
                          " (result " + std::to_string(r->result) + ")";
    return std::unexpected(
        Error{r->status, std::move(message), 409, std::move(r->deadlock)});
  }
  auto impl = std::make_unique<SemaphoreGuard::Impl>(
      impl_, std::move(ns), std::move(name), options.principal);
  impl->fence = r->fence;
  impl->permits = options.permits;
  impl->waited = r->result == 1;
  return SemaphoreGuard(std::move(impl));
}

SemaphoreGuard::SemaphoreGuard(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
SemaphoreGuard::SemaphoreGuard(SemaphoreGuard&&) noexcept = default;

SemaphoreGuard& SemaphoreGuard::operator=(SemaphoreGuard&& other) noexcept {
  if (this != &other) {
    if (impl_ && impl_->held()) (void)impl_->Release();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

SemaphoreGuard::~SemaphoreGuard() {
  if (impl_ && impl_->held()) (void)impl_->Release();
}

std::uint64_t SemaphoreGuard::fence() const { return impl_->fence; }
std::int64_t SemaphoreGuard::permits() const { return impl_->permits; }
bool SemaphoreGuard::waited() const { return impl_->waited; }
bool SemaphoreGuard::held() const { return impl_ && impl_->held(); }
Result<void> SemaphoreGuard::Release() { return impl_->Release(); }

}  // namespace leasehold::client
