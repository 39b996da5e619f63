// CheckoutGuard: a checkout renewed in the background, checked in when
// destroyed.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "client/client_impl.h"
#include "client/ticker.h"
#include "common/token.h"

namespace leasehold::client {

class CheckoutGuard::Impl {
 public:
  Impl(Client c, std::string ns, std::string key, CheckoutOptions options,
       std::uint64_t fence, std::function<void(const Error&)> on_lost)
      : client_(std::move(c)),
        ns_(std::move(ns)),
        key_(std::move(key)),
        options_(std::move(options)),
        fence_(fence),
        on_lost_(std::move(on_lost)) {}
  ~Impl() { Shutdown(); }

  void StartRenewal() {
    // A third of the TTL leaves room for two failed renewals in a row.
    const Milliseconds period = std::max(options_.ttl / 3, Milliseconds(1));
    renewal_wait_ = RenewalWait(period, client_.options().io_timeout);
    ticker_ = std::make_unique<detail::Ticker>(period,
                                               [this] { return RenewTick(); });
  }

  // Stops renewing and checks in if the lease is still ours.
  void Shutdown() {
    if (ticker_) ticker_->Stop();
    if (held()) (void)Checkin();
  }

  bool held() const { return !lost_ && !checked_in_; }
  const std::string& token() const { return options_.token; }
  std::uint64_t fence() const { return fence_; }

  Result<WriteOutcome> Save(std::string_view body,
                            std::optional<std::int64_t> if_version) {
    if (!held()) return std::unexpected(NotHeld());
    return client_.Save(ns_, key_, Proof{"", options_.token}, body, if_version);
  }

  Result<void> Checkin() {
    if (ticker_) ticker_->Stop();
    if (!held()) return std::unexpected(NotHeld());
    checked_in_ = true;
    auto r = client_.Checkin(ns_, key_, Proof{"", options_.token});
    if (!r) return std::unexpected(r.error());
    if (!r->done) {
      return std::unexpected(Error{
          r->reason, "checkin of " + key_ + " refused: " + r->reason, 423});
    }
    return {};
  }

 private:
  Error NotHeld() const {
    return Error{"lost",
                 "the checkout of " + key_ + " in " + ns_ +
                     (lost_ ? " was lost" : " was checked in"),
                 0};
  }

  // Re-checks out with the same token: a renewal when the lease is still
  // ours, else the lease is lost.
  bool RenewTick() {
    auto r =
        client_.CheckoutWithin(ns_, key_, options_, renewal_wait_, nullptr);
    if (!r) {
      const unsigned s = r.error().http_status;
      if (s == 0 || s >= 500) return true;  // transient: try next period
      return Lose(r.error());
    }
    if (r->granted && r->renewed) return true;
    if (r->granted) {
      // The old lease ended (broken, or ran out) and this is a new one that
      // nobody asked for: give it back.
      (void)client_.Checkin(ns_, key_, Proof{"", options_.token});
      return Lose(Error{"lost",
                        "the checkout of " + key_ + " in " + ns_ +
                            " was broken or ran out before it was renewed",
                        200});
    }
    return Lose(Error{"lost",
                      "the checkout of " + key_ + " in " + ns_ +
                          " is now held by " + r->locked_by,
                      423});
  }

  bool Lose(const Error& error) {
    lost_ = true;
    // The callback may destroy the guard (and this Impl): take it out first
    // and touch nothing of `this` afterwards.
    auto on_lost = std::move(on_lost_);
    if (on_lost) on_lost(error);
    return false;
  }

  Client client_;
  const std::string ns_, key_;
  const CheckoutOptions options_;  // token always set
  const std::uint64_t fence_;
  std::function<void(const Error&)> on_lost_;
  Milliseconds renewal_wait_{0};  // set before the ticker starts
  std::atomic<bool> lost_{false};
  std::atomic<bool> checked_in_{false};
  std::unique_ptr<detail::Ticker> ticker_;
};

Result<CheckoutGuard> Client::CheckoutKey(
    std::string ns, std::string key, CheckoutOptions options,
    std::function<void(const Error&)> on_lost) {
  // Our own token makes the renewals (and any resend) idempotent.
  if (options.token.empty()) options.token = NewLeaseToken();
  auto r = Checkout(ns, key, options);
  if (!r) return std::unexpected(r.error());
  if (!r->granted) {
    return std::unexpected(Error{"locked",
                                 key + " in " + ns + " is checked out by " +
                                     r->locked_by + " until " + r->expires_at,
                                 423});
  }
  auto impl = std::make_shared<CheckoutGuard::Impl>(
      *this, std::move(ns), std::move(key), std::move(options), r->fence,
      std::move(on_lost));
  impl->StartRenewal();
  return CheckoutGuard(std::move(impl));
}

CheckoutGuard::CheckoutGuard(std::shared_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
CheckoutGuard::CheckoutGuard(CheckoutGuard&&) noexcept = default;

CheckoutGuard& CheckoutGuard::operator=(CheckoutGuard&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->Shutdown();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

CheckoutGuard::~CheckoutGuard() {
  if (impl_) impl_->Shutdown();
}

const std::string& CheckoutGuard::token() const { return impl_->token(); }
std::uint64_t CheckoutGuard::fence() const { return impl_->fence(); }
bool CheckoutGuard::held() const { return impl_ && impl_->held(); }

Result<WriteOutcome> CheckoutGuard::Save(
    std::string_view body, std::optional<std::int64_t> if_version) {
  return impl_->Save(body, if_version);
}

Result<void> CheckoutGuard::Checkin() { return impl_->Checkin(); }

}  // namespace leasehold::client
