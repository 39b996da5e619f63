#include "store/durable_engine.h"

namespace leasehold {

Result<std::unique_ptr<DurableEngine>> DurableEngine::Open(
    std::unique_ptr<Store> store, EngineOptions options, const Clock& clock) {
  auto engine = std::make_unique<Engine>(options);
  const Time now = clock.Now();
  auto fences = store->Load(
      [&](KeyRow&& row) { return engine->RestoreKey(now, std::move(row)); });
  const Status st = fences ? engine->RestoreFences(*fences) : fences.error();
  if (!st.ok()) {
    return std::unexpected(
        Status(StatusCode::kUnavailable,
               "cannot load " + store->Describe() + ": " + st.message()));
  }
  // Restoring journals nothing; the first fence above the reservation will.
  return std::unique_ptr<DurableEngine>(
      new DurableEngine(std::move(store), std::move(engine), clock));
}

}  // namespace leasehold
