#include "store/durable_engine.h"

namespace leasehold {

Result<std::unique_ptr<DurableEngine>> DurableEngine::Open(
    std::unique_ptr<Store> store, EngineOptions options, const Clock& clock) {
  auto state = store->Load();
  if (!state) return std::unexpected(state.error());
  auto engine = std::make_unique<Engine>(options);
  if (Status st = engine->Restore(clock.Now(), *state); !st.ok()) {
    return std::unexpected(
        Status(StatusCode::kUnavailable,
               "cannot load " + store->Describe() + ": " + st.message()));
  }
  // Restore journals nothing; the first fence above the reservation will.
  return std::unique_ptr<DurableEngine>(
      new DurableEngine(std::move(store), std::move(engine), clock));
}

}  // namespace leasehold
