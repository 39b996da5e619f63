#include "service/store_supervisor.h"

#include "common/log.h"

#include <algorithm>
#include <string>

namespace leasehold {

void StoreSupervisor::BeginRecovery(const Status& failure) {
  next_retry_ = recovery_->first_retry;
  if (recovery_->on_failure) recovery_->on_failure();
  log::Error("store failed: writes answer unavailable until it is opened again",
             {{"error", failure.message()}});
  ArmAttempt();
}

void StoreSupervisor::RetryLater(const Status& why) {
  log::Warn("store still unavailable",
            {{"error", why.message()},
             {"next_attempt_ms", std::to_string(next_retry_.count())}});
  next_retry_ = std::min(next_retry_ * 2, recovery_->max_retry);
  ArmAttempt();
}

void StoreSupervisor::ArmAttempt() {
  timer_.expires_after(next_retry_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) attempt_();
  });
}

Result<StoreSupervisor::Reloaded> StoreSupervisor::Reopen(
    std::shared_ptr<Store>& failed, const EngineLoader& loader) const {
  if (failed != nullptr) {
    if (Status st = failed->Close(); !st.ok()) return std::unexpected(st);
    failed.reset();
  }
  auto opened = recovery_->reopen();
  if (!opened) return std::unexpected(opened.error());
  WrittenStore store = loader.Wrap(std::move(*opened));
  auto engine = loader.Load(*store.store);
  if (!engine) return std::unexpected(engine.error());
  return Reloaded{std::move(store), std::move(*engine)};
}

void StoreSupervisor::ForgetOutageChanges() {
  if (outage_engine_->HasJournal()) (void)outage_engine_->TakeJournal();
  (void)outage_engine_->TakeFinishedWaits();
}

void StoreSupervisor::Reset(std::shared_ptr<MemoryStoreData> last_durable) {
  timer_.cancel();
  failed_.reset();
  last_durable_ = std::move(last_durable);
  outage_engine_.reset();
}

}  // namespace leasehold
