// StoreSupervisor: what an EngineService keeps while its store has failed,
// until it serves again. The engine loaded from the last acknowledged state
// that answers reads meanwhile, the failed store until it is closed, and
// (EnableRecovery) the attempts to close, open and load the store again,
// backing off. The service moves between its modes; this unit holds what
// each mode needs. Every method but Reopen() runs under the service's mutex.
#ifndef LEASEHOLD_SERVICE_STORE_SUPERVISOR_H_
#define LEASEHOLD_SERVICE_STORE_SUPERVISOR_H_

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "engine/engine.h"
#include "service/engine_loader.h"
#include "store/store.h"

namespace leasehold {

class StoreSupervisor {
 public:
  // Opens the store again, for a recovery: a new file handle or connection
  // to the same data. Runs on an I/O thread, never under the mutex.
  using StoreOpener = std::function<Result<std::unique_ptr<Store>>()>;
  struct Recovery {
    StoreOpener reopen;
    // The first attempt comes this long after the failure; each failed one
    // doubles the wait, up to max_retry.
    std::chrono::milliseconds first_retry{100};
    std::chrono::milliseconds max_retry{5000};
    // Called once per failure, under the service's mutex (so it must not
    // call the service); may be empty.
    std::function<void()> on_failure = {};
  };
  // A store opened again, and the engine loaded from it.
  struct Reloaded {
    WrittenStore store;
    LoadedEngine engine;
  };

  // `attempt` runs on an I/O thread, not under the mutex, when an attempt
  // is due.
  StoreSupervisor(boost::asio::io_context& io, std::function<void()> attempt)
      : timer_(io), attempt_(std::move(attempt)) {}

  // Before serving, at most once.
  void EnableRecovery(Recovery recovery) { recovery_ = std::move(recovery); }
  bool recovers() const { return recovery_.has_value(); }

  // The store failed with `failure`: arms the first attempt.
  void BeginRecovery(const Status& failure);
  // The last attempt failed with `why`: arms the next, backing off.
  void RetryLater(const Status& why);
  // Off the mutex: closes `failed` (Store::Close: until then, what its
  // files hold may include the refused batch; `failed` stays set while it
  // cannot be closed), opens the store again and loads an engine from it.
  Result<Reloaded> Reopen(std::shared_ptr<Store>& failed,
                          const EngineLoader& loader) const;
  // Arms no attempt any more (the service stops).
  void StopAttempts() { timer_.cancel(); }
  // A failed store, kept until it is closed: it is not opened again before.
  void KeepFailed(std::shared_ptr<Store> store) { failed_ = std::move(store); }
  std::shared_ptr<Store> TakeFailed() { return std::move(failed_); }
  void CountRecovery() { ++recoveries_; }
  std::uint64_t recoveries() const { return recoveries_; }

  // The copy of what the serving store acknowledged (null without outage
  // reads), from which the engine for outage reads is loaded.
  const std::shared_ptr<MemoryStoreData>& last_durable() const {
    return last_durable_;
  }
  // While the store has failed and that engine is loaded: the engine that
  // answers reads; null otherwise.
  Engine* outage_engine() const { return outage_engine_.get(); }
  void ServeOutageReads(std::unique_ptr<Engine> engine) {
    outage_engine_ = std::move(engine);
  }
  // After a read on the outage engine: drops what it changed there.
  void ForgetOutageChanges();

  // A store serves again (`last_durable` is its copy), or none does (null):
  // nothing of the last failure is kept, and no attempt is due.
  void Reset(std::shared_ptr<MemoryStoreData> last_durable);

 private:
  void ArmAttempt();

  boost::asio::steady_timer timer_;
  std::function<void()> attempt_;
  std::optional<Recovery> recovery_;
  std::chrono::milliseconds next_retry_{0};
  std::uint64_t recoveries_ = 0;
  std::shared_ptr<Store> failed_;
  std::shared_ptr<MemoryStoreData> last_durable_;
  std::unique_ptr<Engine> outage_engine_;
};

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_STORE_SUPERVISOR_H_
