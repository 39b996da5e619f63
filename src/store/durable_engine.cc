#include "store/durable_engine.h"

#include "store/restore.h"

namespace leasehold {

Result<std::unique_ptr<DurableEngine>> DurableEngine::Open(
    std::unique_ptr<Store> store, EngineOptions options, const Clock& clock) {
  auto engine = RestoreEngine(*store, options, clock.Now());
  if (!engine) return std::unexpected(engine.error());
  // Restoring journals nothing; the first fence above the reservation will.
  return std::unique_ptr<DurableEngine>(
      new DurableEngine(std::move(store), std::move(*engine), clock));
}

}  // namespace leasehold
